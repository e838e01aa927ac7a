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

/// A lock whose holder panicked still holds sound data: every entry is whole.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
