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
    Formula::parse(text)
        .map(Arc::new)
        .map_err(|e| first_error(&e))
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

/// A formula's text to its parse (and lowering), or the error it gives.
type Parsed = FxHashMap<Box<str>, Result<Arc<Formula>, FormulaError>>;

/// Pack, then the name as written, to the qualified field ID (`None`: no such field).
type Names = FxHashMap<Box<str>, FxHashMap<Box<str>, Option<Arc<str>>>>;

/// What the engine derives from a ruleset once: its formulas parsed, its field names resolved.
/// Pure functions of the ruleset (and of the text), so remembering them changes no answer.
#[derive(Default)]
struct Shared {
    formulas: Mutex<Parsed>,
    names: Mutex<Names>,
    layout: std::sync::OnceLock<Arc<[u32]>>,
}

fn shared(ruleset: &Ruleset) -> Option<&Shared> {
    ruleset.derived.get_or_init(Shared::default)
}

/// Parses `text`, once per ruleset: every session and database of `ruleset` shares the result.
pub fn parse_in(ruleset: &Ruleset, text: &str) -> Result<Arc<Formula>, FormulaError> {
    let parse = || {
        Formula::parse(text)
            .map(Arc::new)
            .map_err(|e| first_error(&e))
    };
    let Some(shared) = shared(ruleset) else {
        return parse();
    };
    if let Some(found) = lock(&shared.formulas).get(text) {
        return found.clone();
    }
    // Parsed outside the lock: another thread may parse the same text meanwhile, to the same result.
    let result = parse();
    let mut formulas = lock(&shared.formulas);
    if formulas.len() < SHARED_LIMIT {
        formulas.insert(text.into(), result.clone());
    }
    result
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
        .map(|(_, decl)| {
            let Some(text) = &decl.decl.formula else {
                return Vec::new();
            };
            let Ok(formula) = parse_in(ruleset, text.as_str()) else {
                return Vec::new();
            };
            formula
                .lowered()
                .exprs
                .iter()
                .filter_map(|(_, expr)| match expr {
                    ocf_formula::lowered::Expr::Field(name) => {
                        resolve_field(ruleset, &decl.pack, name)
                    }
                    _ => None,
                })
                .filter_map(|id| ruleset.fields.0.get_index_of(&*id))
                .map(|i| i as u32)
                .collect()
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

/// A lock whose holder panicked still holds sound data: every entry is whole.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
