//! The proposed sheet (EA "The proposed sheet"): the character as the changes proposed so far
//! would leave it, for a step with `sheet: proposed`.
//!
//! The changes `to: self` without `character` are applied, in order, as one applyChanges batch,
//! not strict, with the call's links and no dice function. The batch runs on a session of the
//! run's own, opened on the given character: a later build applies only the changes proposed
//! since the last one when those extend it (a choice's next pick, a later step), else it brings
//! the session back to the given file first, so each build re-executes only what the new changes
//! touch. The session is left in the given character's database at the end of the call, for the
//! next call on it ([`ocf_engine::Database::keep`]): opening one is most of a proposed sheet's
//! cost. The character it gives is then read through the caller's database as a derived input
//! ([`CharacterInput::derive_from`]): it shares every ruleset-level memo (items, parsed formulas)
//! and the given character's inputs it holds as they are with the given sheet, and computes only
//! what the step reads. Builds are cached by the batch, so a replay, which proposes the same
//! changes, rebuilds the same sheet.

use std::sync::Arc;

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
    /// The ruleset it was opened on (the given sheet's, shared).
    rules: Arc<ocf_model::Ruleset>,
    /// The given character's file, as the session was last brought to it.
    given: Arc<Character>,
    /// The call's links, which the session holds.
    links: Map<String, Json>,
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
        // What a slow step spent building its sheet (`RUST_LOG=ocf_actions=info`).
        let _span = tracing::info_span!("action.proposed_sheet", changes = batch.len()).entered();
        self.hold(db, &batch, path)?;
        let private = self.session.as_ref().expect("made by hold");
        // Read from the session's inputs, which hold the file as the engines see it already.
        let input = match (
            private.session.db(private.id),
            private.session.character_input(private.id),
        ) {
            (Ok(theirs), Some(c)) => given.derive_from(db, theirs, c),
            _ => given.derive(db, &private.given),
        };
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
        db: &ocf_engine::Database,
        proposed: &[Json],
        path: &str,
    ) -> Result<(&mut ocf_engine::Session, ocf_engine::CharacterId), ActionError> {
        let batch = own(proposed);
        self.hold(db, &batch, path)?;
        let private = self.session.as_mut().expect("made by hold");
        Ok((&mut private.session, private.id))
    }

    /// Brings the run's session to the given file with `batch` applied: only the changes since
    /// the batch it holds when this one extends it.
    fn hold(
        &mut self,
        db: &ocf_engine::Database,
        batch: &[Json],
        path: &str,
    ) -> Result<(), ActionError> {
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
            let file = ocf_engine::input::held_file(db, given).clone();
            // The session an earlier call on this database left, when it was opened on this
            // character: brought back to the given file below (an edit since, or the batch it
            // holds), it re-executes what differs, where a new one would compute its character
            // again from nothing, and be dropped at the end.
            let kept = db
                .take_kept::<Private>()
                .filter(|p| Arc::ptr_eq(&p.rules, ruleset) && p.session.file(p.id).is_ok());
            self.session = Some(match kept {
                Some(mut private) => {
                    // What the session holds is told by the file it was opened on, whatever
                    // input the character is now (a reclaim makes new ones).
                    if !Arc::ptr_eq(&private.given, &file) {
                        if *private.given != *file {
                            // Edited since: the session goes back to the file as it is now.
                            let _ = private.session.update(private.id, &file);
                            private.holds.clear();
                        }
                        private.given = file;
                    }
                    if private.links != self.links {
                        let _ = private.session.set_links(private.id, self.links.clone());
                        private.links = self.links.clone();
                    }
                    private
                }
                None => {
                    // The given sheet's ruleset, shared: a ruleset's clone copies every
                    // declaration. On the run's own thread, which computes the proposed sheet
                    // itself: the session answers several times a step, and a handoff to a
                    // worker of its own for each cost more than most answers.
                    let mut session = ocf_engine::Session::on_callers_thread(ruleset.clone());
                    let id = session.open(&file, &[]);
                    let _ = session.set_links(id, self.links.clone());
                    Private {
                        session,
                        id,
                        rules: ruleset.clone(),
                        given: file,
                        links: self.links.clone(),
                        holds: Vec::new(),
                    }
                }
            });
        }
        let private = self.session.as_mut().expect("made above");
        // Extending the batch the session holds, it applies the rest; else it goes back to the
        // given file, and the batch is applied to that (one step: the given file's copy is the
        // one the batch edits).
        let extends = batch.starts_with(&private.holds);
        let from = if extends { private.holds.len() } else { 0 };
        if !extends {
            private.holds.clear();
            if batch.is_empty() {
                let _ = private.session.update(private.id, &private.given);
            }
        }
        if from < batch.len() {
            let changes = ocf_engine::changes::read_batch(&Json::Array(batch[from..].to_vec()))
                .map_err(|e| fail(json!(e)))?;
            let options = ocf_engine::changes::Options {
                links: self.links.clone(),
                strict: false,
                dice: None,
            };
            let applied = if extends {
                private.session.apply(private.id, &changes, options)
            } else {
                private
                    .session
                    .apply_to(private.id, &private.given, &changes, options)
            };
            if let Err(mut error) = applied {
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
        Ok(())
    }

    /// Leaves the run's session in `db` for the next call on it ([`ocf_engine::Database::keep`]).
    pub fn keep_in(&mut self, db: &ocf_engine::Database) {
        if let Some(private) = self.session.take() {
            db.keep(private);
        }
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
