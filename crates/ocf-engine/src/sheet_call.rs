//! computeSheet as a call (engine-interface.md): a one-shot [`crate::Session`] opened on the
//! character, its sheet read as JSON. Above the session, which [`crate::sheet`] knows nothing of.

use std::sync::Arc;

use serde_json::{Map, Value as Json};

/// computeSheet as a call (docs/spec/engine-interface.md): `character`'s homebrew loaded on top of
/// `ruleset` (EC, "A character's homebrew") by [`crate::Session::open`], then the sheet. A
/// homebrew that fails to load gives empty `values` and its `homebrew-error`s.
pub fn compute_sheet_call(
    ruleset: &ocf_model::Ruleset,
    character: &ocf_model::Character,
    competing: &[String],
    links: &Map<String, Json>,
) -> Json {
    compute_sheet_shared(Arc::new(ruleset.clone()), character, competing, links)
}

/// [`compute_sheet_call`] on a ruleset the caller shares or hands over: a ruleset's clone copies
/// every declaration (2 M instructions for the 5E pack's, a tenth of `ocf sheet` after its build).
#[tracing::instrument(name = "computeSheet", level = "info", skip_all, fields(character = %character.id))]
pub fn compute_sheet_shared(
    ruleset: Arc<ocf_model::Ruleset>,
    character: &ocf_model::Character,
    competing: &[String],
    links: &Map<String, Json>,
) -> Json {
    let mut session = crate::Session::shared(ruleset);
    let id = session.open(character, competing);
    let _ = session.set_links(id, links.clone());
    session.sheet_json(id).unwrap_or_default()
}
