//! The proposed sheet (EA "The proposed sheet"): the character as the changes proposed so far
//! would leave it, for a step with `sheet: proposed`.
//!
//! The changes `to: self` without `character` are applied, in order, as one applyChanges batch,
//! not strict, with the call's links and no dice function. The batch runs on a session of the
//! run's own, opened once per call on the given character: a later build applies only the changes
//! proposed since the last one when those extend it (a choice's next pick, a later step), else it
//! brings the session back to the given file first, so each build re-executes only what the new
//! changes touch. The character it gives is then read through the caller's database as a derived
//! input ([`CharacterInput::derive`]): it shares every ruleset-level memo (items, parsed formulas)
//! with the given sheet and computes only what the step reads. Builds are cached by the batch, so
//! a replay, which proposes the same changes, rebuilds the same sheet.

use ocf_engine::input::CharacterInput;
use ocf_model::Character;
use serde_json::{Map, Value as Json, json};

use crate::error::ActionError;

/// The run's proposed sheets.
#[derive(Default)]
pub struct Sheets {
    /// The call's links, for the batch.
    pub links: Map<String, Json>,
    /// The character as given (set at the run's first step).
    pub given: Option<CharacterInput>,
    session: Option<Private>,
    /// Built sheets by batch: the last few, as a step and its picks ask again.
    built: Vec<(Vec<Json>, CharacterInput)>,
}

/// The session the batches run on.
struct Private {
    session: ocf_engine::Session,
    id: ocf_engine::CharacterId,
    /// The given character's file.
    given: Character,
    /// The batch the session holds now (applied to the given file).
    holds: Vec<Json>,
}

/// How many built sheets are kept.
const KEEP: usize = 4;

impl Sheets {
    pub fn new(links: Map<String, Json>) -> Sheets {
        Sheets {
            links,
            ..Sheets::default()
        }
    }

    /// The proposed sheet for `proposed` (the run's proposed changes so far), built for the step
    /// at `path`.
    pub fn build(
        &mut self,
        db: &ocf_engine::Database,
        proposed: &[Json],
        path: &str,
    ) -> Result<CharacterInput, ActionError> {
        let given = self
            .given
            .expect("the given character is set at the first step");
        let batch = own(proposed);
        if batch.is_empty() {
            return Ok(given);
        }
        if let Some((_, c)) = self.built.iter().find(|(b, _)| *b == batch) {
            return Ok(*c);
        }
        let file = self.hold(db, &batch, path)?;
        let input = given.derive(db, file);
        if self.built.len() == KEEP {
            self.built.remove(0);
        }
        self.built.push((batch, input));
        Ok(input)
    }

    /// The run's session holding the proposed character for `proposed`, for what only a session
    /// answers (listOptions, over pending choices).
    pub fn session(
        &mut self,
        db: &dyn salsa::Database,
        proposed: &[Json],
        path: &str,
    ) -> Result<(&mut ocf_engine::Session, ocf_engine::CharacterId), ActionError> {
        let batch = own(proposed);
        self.hold(db, &batch, path)?;
        let private = self.session.as_mut().expect("made by hold");
        Ok((&mut private.session, private.id))
    }

    /// Brings the run's session to the given file with `batch` applied: only the changes since
    /// the batch it holds when this one extends it. The file it then holds.
    fn hold(
        &mut self,
        db: &dyn salsa::Database,
        batch: &[Json],
        path: &str,
    ) -> Result<&Character, ActionError> {
        let given = self
            .given
            .expect("the given character is set at the first step");
        let fail = |error: Json| {
            ActionError::new(
                "proposed-changes-failed",
                "the changes proposed before the step don't apply",
            )
            .with("step", path)
            .with("error", error)
        };
        if self.session.is_none() {
            let ruleset = given.ruleset(db).ruleset(db);
            let file = given.to_file(db, ruleset);
            // The given sheet's ruleset, shared: a ruleset's clone copies every declaration.
            let mut session = ocf_engine::Session::shared(ruleset.clone());
            let id = session.open(&file, &[]);
            let _ = session.set_links(id, self.links.clone());
            self.session = Some(Private {
                session,
                id,
                given: file,
                holds: Vec::new(),
            });
        }
        let private = self.session.as_mut().expect("made above");
        let from = if batch.starts_with(&private.holds) {
            private.holds.len()
        } else {
            let _ = private.session.update(private.id, &private.given);
            private.holds.clear();
            0
        };
        if from < batch.len() {
            let changes = ocf_engine::changes::read_batch(&Json::Array(batch[from..].to_vec()))
                .map_err(|e| fail(json!(e)))?;
            let options = ocf_engine::changes::Options {
                links: self.links.clone(),
                strict: false,
                dice: None,
            };
            if let Err(mut error) = private.session.apply(private.id, &changes, options) {
                // The path in the whole batch, not in the part applied. The session went back to
                // what it held before.
                if let Some(rest) = error.path.strip_prefix("/changes/") {
                    let (index, tail) = rest.split_once('/').unwrap_or((rest, ""));
                    if let Ok(i) = index.parse::<usize>() {
                        let sep = if tail.is_empty() { "" } else { "/" };
                        error.path = format!("/changes/{}{sep}{tail}", i + from);
                    }
                }
                return Err(fail(json!(error)));
            }
            private.holds = batch.to_vec();
        }
        Ok(private.session.file(private.id).unwrap_or(&private.given))
    }
}

/// The changes of `proposed` for the character itself: `to: self` without `character`.
fn own(proposed: &[Json]) -> Vec<Json> {
    proposed
        .iter()
        .filter(|p| p.get("to").and_then(Json::as_str) == Some("self"))
        .filter(|p| p.get("character").is_none())
        .filter_map(|p| p.get("change").cloned())
        .collect()
}

/// `self` on the step's sheet: the action's own copy as it is on `character` (absent if a change
/// removed it), found by its instance ID.
pub fn self_on(
    db: &dyn salsa::Database,
    self_ref: &ocf_engine::context::SelfRef,
    character: CharacterInput,
) -> ocf_engine::context::SelfRef {
    use ocf_engine::context::SelfRef;
    let SelfRef::Copy(copy) = self_ref else {
        return self_ref.clone();
    };
    let id = copy.id(db);
    character
        .inventory(db)
        .iter()
        .chain(character.features(db).iter())
        .find(|c| c.id(db) == id)
        .map_or(SelfRef::None, |c| SelfRef::Copy(*c))
}
