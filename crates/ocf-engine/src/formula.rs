//! Formulas as the sheet reads them: parsed and lowered once per distinct text per ruleset, and
//! shared by every session and database opened on that ruleset (its [`ocf_model::Derived`] slot),
//! whatever declares them. Field names are resolved in the declaring pack once per ruleset too
//! ([`resolve_field`]), so a field read formats and allocates nothing.

use std::sync::{Arc, Mutex};

use ocf_formula::{Formula, FormulaError};
use ocf_model::{Namespace, Ruleset};
use rustc_hash::FxHashMap;

/// Parses `text`, remembered nowhere: for formulas from outside the ruleset (a change batch's, an
/// action's answers), whose texts are untrusted and unbounded. Interning them, or keeping them in
/// the ruleset's [`parse_in`] table, would keep one entry per distinct text for the session's life
/// (issue 19); a parse costs about what one evaluation does. The ruleset's own formulas go through
/// [`parse_in`].
pub fn parse(_db: &dyn salsa::Database, text: &str) -> Result<Arc<Formula>, FormulaError> {
    parse_text(text)
}

fn first_error(errors: &[FormulaError]) -> FormulaError {
    errors.first().cloned().unwrap_or_else(|| {
        FormulaError::new(
            ocf_formula::ErrorCode::FormulaSyntax,
            "the formula does not parse",
            Default::default(),
        )
    })
}

/// How many distinct formula texts (and field names) a ruleset remembers: far above any ruleset's
/// own, so that formulas a character brings (untrusted) cannot grow the memory without bound;
/// past it a formula is parsed again at each read.
pub const SHARED_LIMIT: usize = 1 << 20;

/// A formula parsed and its names resolved ([`parse_resolved`]).
type Resolved = Result<(Arc<Formula>, Option<ResolvedNames>), FormulaError>;

/// A field's tags when all are written, else `None`.
type Tags = Option<Arc<[String]>>;

/// A formula's text to its parse (and lowering), or the error it gives.
type Parsed = FxHashMap<Box<str>, Entry>;

/// A formula of the ruleset's table: its parse, and the fields it names resolved in each pack it
/// was read in.
struct Entry {
    parsed: Result<Arc<Formula>, FormulaError>,
    /// A formula is read in one pack, most often: a short list.
    names: Vec<(Box<str>, ResolvedNames)>,
}

/// The fields a formula names, resolved in one pack, by the field expression's place in the
/// lowered formula (`None` for every other expression, and a name that isn't a field).
pub type ResolvedNames = Arc<[Option<ResolvedField>]>;

/// A field name resolved: the qualified ID, and the field's place in the ruleset's fields.
#[derive(Debug, Clone)]
pub struct ResolvedField {
    pub id: Arc<str>,
    pub place: u32,
}

/// Pack, then the name as written, to the qualified field ID (`None`: no such field).
type Names = FxHashMap<Box<str>, FxHashMap<Box<str>, Option<Arc<str>>>>;

/// What the engine derives from a ruleset once: its formulas parsed, its field names resolved.
/// Pure functions of the ruleset (and of the text), so remembering them changes no answer.
#[derive(Default)]
struct Shared {
    formulas: Mutex<Parsed>,
    names: Mutex<Names>,
    layout: std::sync::OnceLock<Arc<[u32]>>,
    ids: std::sync::OnceLock<Arc<[Arc<str>]>>,
    /// Each field's own `formula` ([`own_formula`]).
    own: std::sync::OnceLock<Box<[std::sync::OnceLock<Resolved>]>>,
    /// Each field's written tags ([`written_tags`]).
    tags: std::sync::OnceLock<Box<[Tags]>>,
    /// The fields an effect can target ([`targets`]).
    targets: std::sync::OnceLock<Arc<crate::targets::Targets>>,
}

fn shared(ruleset: &Ruleset) -> Option<&Shared> {
    ruleset.derived.get_or_init(Shared::default)
}

/// Parses `text`, once per ruleset: every session and database of `ruleset` shares the result.
/// The load's parse is read first, without a lock, and not copied into the table: an action's
/// formulas are the load's, and a call's first use of one costs no more than the next.
pub fn parse_in(ruleset: &Ruleset, text: &str) -> Result<Arc<Formula>, FormulaError> {
    if let Some(formula) = loaded(ruleset, text) {
        return Ok(Arc::clone(formula));
    }
    let Some(shared) = shared(ruleset) else {
        return parse_text(text);
    };
    if let Some(found) = lock(&shared.formulas).get(text) {
        return found.parsed.clone();
    }
    let result = parse_text(text);
    remember(shared, text, result.clone(), None);
    result
}

/// The load's parse of `text`, when it made one (the ruleset keeps them, `Ruleset::parsed`).
fn loaded<'r>(ruleset: &'r Ruleset, text: &str) -> Option<&'r Arc<Formula>> {
    ruleset
        .parsed
        .get::<ocf_load::parsed::Kept>()
        .and_then(|kept| kept.get(text))
}

/// `text` parsed: the load's parse when it made one (the ruleset keeps them, `Ruleset::parsed`),
/// else parsed now.
fn parse_loaded(ruleset: &Ruleset, text: &str) -> Result<Arc<Formula>, FormulaError> {
    match loaded(ruleset, text) {
        Some(formula) => Ok(Arc::clone(formula)),
        None => parse_text(text),
    }
}

/// [`parse_in`], with the fields the formula names resolved in `pack` (EC: "resolving field
/// names in its pack and that pack's dependencies"), once per ruleset: a sheet's field reads
/// neither resolve nor hash a name ([`crate::context::SheetContext::evaluate`]).
pub fn parse_resolved(
    ruleset: &Ruleset,
    pack: &str,
    text: &str,
) -> Result<(Arc<Formula>, Option<ResolvedNames>), FormulaError> {
    let Some(shared) = shared(ruleset) else {
        return parse_loaded(ruleset, text).map(|f| (f, None));
    };
    let found = lock(&shared.formulas).get(text).map(|found| {
        let names = found.names.iter().find(|(p, _)| **p == *pack);
        (found.parsed.clone(), names.map(|(_, names)| names.clone()))
    });
    let parsed = match found {
        Some((Err(error), _)) => return Err(error),
        Some((Ok(formula), Some(names))) => return Ok((formula, Some(names))),
        Some((parsed, None)) => parsed,
        None => parse_loaded(ruleset, text),
    };
    // Parsed and resolved outside the lock: another thread may do the same meanwhile, to the same
    // result.
    let names = parsed
        .as_ref()
        .ok()
        .map(|f| resolve_names(ruleset, pack, f));
    remember(
        shared,
        text,
        parsed.clone(),
        names.clone().map(|n| (pack, n)),
    );
    parsed.map(|f| (f, names))
}

fn parse_text(text: &str) -> Result<Arc<Formula>, FormulaError> {
    Formula::parse(text)
        .map(Arc::new)
        .map_err(|e| first_error(&e))
}

/// Keeps a parse, and the names resolved in a pack, in the ruleset's table, while it has room.
fn remember(
    shared: &Shared,
    text: &str,
    parsed: Result<Arc<Formula>, FormulaError>,
    names: Option<(&str, ResolvedNames)>,
) {
    let mut formulas = lock(&shared.formulas);
    if formulas.len() >= SHARED_LIMIT && !formulas.contains_key(text) {
        return;
    }
    let entry = formulas.entry(text.into()).or_insert_with(|| Entry {
        parsed,
        names: Vec::new(),
    });
    if let Some((pack, names)) = names
        && entry.names.len() < MAX_PACKS_PER_FORMULA
        && !entry.names.iter().any(|(p, _)| **p == *pack)
    {
        entry.names.push((pack.into(), names));
    }
}

/// How many packs' resolutions one formula keeps: a text read in more packs resolves again in
/// the others at each evaluation (by name, [`resolve_field`]'s table).
const MAX_PACKS_PER_FORMULA: usize = 8;

/// Each field expression of `formula` resolved in `pack`.
fn resolve_names(ruleset: &Ruleset, pack: &str, formula: &Formula) -> ResolvedNames {
    let exprs = &formula.lowered().exprs;
    let mut names: Vec<Option<ResolvedField>> = vec![None; exprs.len()];
    for (at, expr) in exprs.iter() {
        if let ocf_formula::lowered::Expr::Field(name) = expr
            && let Some(id) = resolve_field(ruleset, pack, name)
            && let Some(place) = ruleset.fields.0.get_index_of(&*id)
        {
            names[at.into_raw().into_u32() as usize] = Some(ResolvedField {
                id,
                place: place as u32,
            });
        }
    }
    names.into()
}

/// A field name as a formula of `pack` writes it, resolved (EC: "resolving field names in its pack
/// and that pack's dependencies"), once per ruleset. A pack the ruleset doesn't know (a test's)
/// reads qualified IDs as they are.
pub fn resolve_field(ruleset: &Ruleset, pack: &str, id: &str) -> Option<Arc<str>> {
    let resolve = || {
        ruleset
            .resolve(pack, id, Namespace::Field)
            .or_else(|| (id.contains(':') && ruleset.fields.get(id).is_some()).then(|| id.into()))
            .map(Arc::<str>::from)
    };
    let Some(shared) = shared(ruleset) else {
        return resolve();
    };
    if let Some(found) = lock(&shared.names)
        .get(pack)
        .and_then(|names| names.get(id))
    {
        return found.clone();
    }
    let result = resolve();
    let mut names = lock(&shared.names);
    if names.len() < SHARED_LIMIT {
        let in_pack = names.entry(pack.into()).or_default();
        if in_pack.len() < SHARED_LIMIT {
            in_pack.insert(id.into(), result.clone());
        }
    }
    result
}

/// The ruleset's fields (their places in its field order) in the order the sheet's memos hold
/// them ([`crate::sheet`]'s chunks), once per ruleset: each field after the earliest field its
/// formula reaches through the fields it names (its root: for a derived value, most often the
/// input it is derived from), and in field order among the fields of one root. An edit of an input
/// then changes the values of a few chunks, not of one chunk for each of its readers, which a
/// ruleset's order (scores, then modifiers, then skills) spreads across the sheet; every other
/// chunk is passed on its durability. Only a formula's own `Field` expressions count: what
/// effects read, or a name a function builds, doesn't move a field; the order is only where the
/// memos sit.
pub fn field_layout(ruleset: &Ruleset) -> Arc<[u32]> {
    let make = || layout_of(ruleset);
    match shared(ruleset) {
        Some(shared) => shared.layout.get_or_init(make).clone(),
        None => make(),
    }
}

fn layout_of(ruleset: &Ruleset) -> Arc<[u32]> {
    let n = ruleset.fields.len();
    let reads: Vec<Vec<u32>> = ruleset
        .fields
        .iter()
        .enumerate()
        .map(|(place, (_, decl))| {
            let Some(text) = &decl.decl.formula else {
                return Vec::new();
            };
            let Ok((formula, names)) = own_formula(ruleset, place, &decl.pack, text.as_str())
            else {
                return Vec::new();
            };
            let names = names.unwrap_or_else(|| resolve_names(ruleset, &decl.pack, &formula));
            names.iter().flatten().map(|name| name.place).collect()
        })
        .collect();
    // Each field's root, depth first without recursion (a chain of untrusted fields may be long);
    // a field read again while it is being followed (a loop) adds nothing.
    const NEW: u8 = 0;
    const OPEN: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; n];
    let mut root: Vec<u32> = (0..n as u32).collect();
    for start in 0..n {
        if state[start] != NEW {
            continue;
        }
        state[start] = OPEN;
        let mut stack = vec![(start, 0usize)];
        while let Some(top) = stack.last_mut() {
            let (field, next) = *top;
            if let Some(&read) = reads[field].get(next) {
                top.1 += 1;
                if state[read as usize] == NEW {
                    state[read as usize] = OPEN;
                    stack.push((read as usize, 0));
                }
                continue;
            }
            for &read in &reads[field] {
                if state[read as usize] == DONE {
                    root[field] = root[field].min(root[read as usize]);
                }
            }
            state[field] = DONE;
            stack.pop();
        }
    }
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&i| (root[i as usize], i));
    order.into()
}

/// The `formula` of the `place`th field of the ruleset, `text`, as [`parse_resolved`] gives it in
/// the field's `pack`: kept by the field's place, so that a value finds its formula without
/// hashing its text or taking the table's lock.
pub fn own_formula(ruleset: &Ruleset, place: usize, pack: &str, text: &str) -> Resolved {
    let Some(shared) = shared(ruleset) else {
        return parse_resolved(ruleset, pack, text);
    };
    let slots = shared.own.get_or_init(|| {
        (0..ruleset.fields.len())
            .map(|_| std::sync::OnceLock::new())
            .collect()
    });
    match slots.get(place) {
        Some(slot) => slot
            .get_or_init(|| parse_resolved(ruleset, pack, text))
            .clone(),
        None => parse_resolved(ruleset, pack, text),
    }
}

/// The fields an effect of `ruleset` can target ([`crate::targets`]), found once per ruleset.
pub(crate) fn targets(ruleset: &Ruleset) -> Arc<crate::targets::Targets> {
    let make = || Arc::new(crate::targets::Targets::of(ruleset));
    match shared(ruleset) {
        Some(shared) => shared.targets.get_or_init(make).clone(),
        None => make(),
    }
}

/// The ruleset's field IDs in field order, made once per ruleset: every character's sheet names
/// its fields with these.
pub fn field_ids(ruleset: &Ruleset) -> Arc<[Arc<str>]> {
    let make = || ruleset.fields.iter().map(|(id, _)| Arc::from(id)).collect();
    match shared(ruleset) {
        Some(shared) => shared.ids.get_or_init(make).clone(),
        None => make(),
    }
}

/// The tags of the `i`th field of the ruleset when they are all written (no `{ formula }` entry),
/// each once, first place kept: one list per ruleset that every value of the field shares, where a
/// list per value was two allocations of every tagged field's value.
pub fn written_tags(ruleset: &Ruleset, i: usize) -> Option<Arc<[String]>> {
    let of = |decl: &ocf_model::Declared<ocf_model::FieldDecl>| {
        let mut tags: Vec<String> = Vec::with_capacity(decl.decl.tags.len());
        for entry in &decl.decl.tags {
            match entry {
                ocf_model::Computed::Literal(tag) => tags.push(tag.0.clone()),
                ocf_model::Computed::Formula { .. } => return None,
            }
        }
        Some(crate::reads::kept_once(tags).into())
    };
    let Some(shared) = shared(ruleset) else {
        return ruleset.fields.0.get_index(i).and_then(|(_, decl)| of(decl));
    };
    shared
        .tags
        .get_or_init(|| ruleset.fields.iter().map(|(_, decl)| of(decl)).collect())
        .get(i)
        .cloned()
        .flatten()
}

/// A lock whose holder panicked still holds sound data: every entry is whole.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
