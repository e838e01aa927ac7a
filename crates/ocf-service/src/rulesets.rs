//! Which ruleset a character computes on. Finding packs (folders, release files, a registry) is the
//! front end's business, not the service's: `ocf serve` passes an implementation that reads the
//! `--packs` given or each pin's folder, as `ocf sheet` does.

use std::sync::Arc;

use ocf_model::{Character, Ruleset};
use serde_json::Value;

/// Gives the ruleset for a character's pins, and a key naming it: characters whose keys are equal
/// share one [`ocf_engine::Session`] (and so its memos).
pub trait Rulesets: Send + Sync {
    /// `Err` holds the problems (each an object with `code`, `message`, `path`), e.g. a pinned
    /// pack not found (`missing-dependency` at `/packs/0`) or a ruleset that does not load.
    fn ruleset_for(&self, character: &Character) -> Result<(String, Arc<Ruleset>), Vec<Value>>;
}

/// One ruleset for every character, whatever it pins (`ocf serve --packs …`, and tests).
pub struct Fixed(pub Arc<Ruleset>);

impl Rulesets for Fixed {
    fn ruleset_for(&self, _: &Character) -> Result<(String, Arc<Ruleset>), Vec<Value>> {
        Ok(("packs".to_owned(), self.0.clone()))
    }
}
