//! A long-running engine: load a ruleset once, open characters, apply edits, read the sheet or one
//! field. Each edit sets one input, so the next read recomputes only what the edit reaches.
//!
//! Memory: each open character has a database of its own, so closing it frees everything it held
//! at once (its inputs, memos and interned keys go with its database), and an edit of one
//! character costs the others nothing: no memo of theirs is checked again. What the characters
//! share is the ruleset (one `Arc`, its formulas parsed once). Within a character, the inputs of
//! removed copies are reused by the next copies added ([`crate::input::Slots`]), and a character's
//! database is rebuilt once the characters derived in it (proposed sheets) hold more than it does
//! ([`Session::reclaim`]; decisions.md, "Session memory").
//!
//! By what a caller does: here opening and closing a character (its homebrew layered, its
//! database made), [`edits`] the edits, [`reads`] the reads (the sheet, what an edit changed, a
//! field) and [`worker`] the threads the queries run on.

mod edits;
mod reads;
mod worker;

use std::sync::Arc;

use ocf_model::{Character, Ruleset};

use crate::db::{CharacterInput, Database, RulesetInput};

use crate::input::Slots;

pub use reads::Stored;
pub use worker::DEEP_STACK;
use worker::{Job, Lent, Worker};

/// How many open/close rounds the tests and benchmarks of long sessions run per cycle (once the
/// number of closes before the database was rebuilt; a close now drops the character's database).
pub const TRIM_AFTER_CLOSED: usize = 16;

/// A character opened in a [`Session`]: its place in the session's lists, and which character
/// opened in that place (a closed character's place is given to the next one opened, and its ID
/// then names no open character).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CharacterId(usize);

impl CharacterId {
    /// The ID of the character opened `generation`-th in place `index` (the first one's is the
    /// index itself).
    fn new(index: usize, generation: usize) -> CharacterId {
        CharacterId(index | (generation << 32))
    }

    fn index(self) -> usize {
        self.0 & 0xffff_ffff
    }

    fn generation(self) -> usize {
        self.0 >> 32
    }
}

pub struct Session {
    /// Where the queries run: `None` on the caller's thread ([`Session::on_callers_thread`]).
    worker: Option<Worker>,
    ruleset: Arc<Ruleset>,
    /// Whether each character's database logs the queries it runs ([`Session::take_executed`]).
    logged: bool,
    /// Each place's open character; `None` once closed.
    open: Vec<Option<Open>>,
    /// How many characters each place has held before the one it holds.
    generations: Vec<usize>,
}

/// How many times its own inputs a character's database may hold in derived ones before
/// [`Session::reclaim`] rebuilds it: the rebuild's cold sheet is then shared by that many
/// proposed sheets' worth of derived inputs.
pub const RECLAIM_AFTER: usize = 8;

/// The fewest inputs a character counts as having, for [`RECLAIM_AFTER`]: a small character's
/// database isn't rebuilt after every few actions.
const RECLAIM_FLOOR: usize = 64;

/// An open character: its own database, with the ruleset it computes on (the session's, or its
/// homebrew's loaded on top), its inputs and the file they were brought to.
struct Open {
    db: Database,
    input: CharacterInput,
    /// The character's `homebrew-error`s (or its `spec-version-unsupported`): a homebrew that
    /// fails to load leaves the character on the session's ruleset and its sheet empty but for
    /// these errors.
    homebrew_errors: Vec<serde_json::Value>,
    held: Held,
    /// The sheet as last reported by [`Session::changes`].
    reported: Option<crate::sheet::Parts>,
    /// Inputs of removed copies, for the next copies added.
    slots: Slots,
    /// Counts the times the character was taken for writing ([`Session::get_mut`]): any change to
    /// its inputs or its database comes after one.
    writes: u64,
    /// A sheet known to be the character's while `writes` is the count it was put with:
    /// listOptions' base sheet, once its trials have put every input back
    /// ([`Session::keep_sheet`]).
    kept: Option<(u64, crate::sheet::Sheet)>,
}

/// The file a character holds: as opened (its `competing` and the call's), with the session's
/// edits. It is what a player would save: its homebrew, pins, links, follow-ups and extensions as
/// opened, and no unsaved standard copy or kept template. Every edit changes it first; the inputs
/// are then brought to it with its standard copies ([`Open::sync_structure`]), so the sheet is
/// always the sheet of this file (decisions.md, "Standard copies through a session's edits").
#[derive(Debug, Clone)]
struct Held {
    file: Character,
    /// Whether the character's ruleset runs activation rounds for its standard copies (some item
    /// declares `standardCopies` or `keepsTemplates`): only then can a value edit change them.
    rounds: bool,
}

/// An edit the session could not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    UnknownCharacter,
    UnknownCopy(String),
    /// The copy is an unsaved standard copy: it is there while its source holds it, and removing
    /// it from the file would change nothing.
    StandardCopy(String),
}

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EditError::UnknownCharacter => f.write_str("no such open character"),
            EditError::UnknownCopy(id) => write!(f, "no copy `{id}`"),
            EditError::StandardCopy(id) => write!(
                f,
                "`{id}` is a standard copy, there while the content that holds it is active"
            ),
        }
    }
}

impl std::error::Error for EditError {}

impl Session {
    pub fn new(ruleset: Ruleset) -> Session {
        Session::build(Arc::new(ruleset), false)
    }

    /// A session on a ruleset shared with other sessions: no copy of it is made (a ruleset's
    /// clone copies every declaration; issue 11).
    pub fn shared(ruleset: Arc<Ruleset>) -> Session {
        Session::build(ruleset, false)
    }

    /// A session whose databases log every query they run ([`Session::take_executed`]), on a
    /// ruleset of its own or a shared one.
    pub fn with_execution_log(ruleset: impl Into<Arc<Ruleset>>) -> Session {
        Session::build(ruleset.into(), true)
    }

    /// A session on a shared ruleset that runs its queries on the thread that calls it, with no
    /// worker thread of its own: for a session inside a call that is itself on a thread (an
    /// action's proposed sheets, whose session answers several times a step), where handing each
    /// question to a worker costs more than the answer. Computing a chain of fields grows the
    /// stack where it runs low ([`crate::db::field_value`]), but checking one again after an
    /// edit recurses in salsa: the caller runs it on a stack as deep as [`DEEP_STACK`]
    /// (ocf-actions runs each call on one).
    pub fn on_callers_thread(ruleset: Arc<Ruleset>) -> Session {
        Session::build_on(ruleset, false, None)
    }

    fn build(ruleset: Arc<Ruleset>, logged: bool) -> Session {
        Session::build_on(ruleset, logged, Some(Worker::start()))
    }

    fn build_on(ruleset: Arc<Ruleset>, logged: bool, worker: Option<Worker>) -> Session {
        Session {
            worker,
            ruleset,
            logged,
            open: Vec::new(),
            generations: Vec::new(),
        }
    }

    pub fn ruleset(&self) -> &Ruleset {
        &self.ruleset
    }

    /// The database of an open character, to run queries on its input
    /// ([`Session::character_input`]) through [`Session::deep`] or directly.
    pub fn db(&self, id: CharacterId) -> Result<&Database, EditError> {
        self.get(id).map(|open| &open.db)
    }

    /// The database of an open character, to set inputs directly: listOptions' trials
    /// ([`crate::options::trial`]), which set a choice's picks and put
    /// them back themselves.
    pub(crate) fn db_mut(&mut self, id: CharacterId) -> Result<&mut Database, EditError> {
        self.get_mut(id).map(|open| &mut open.db)
    }

    /// Opens `character`, its homebrew loaded on top of the session's ruleset (EC, "A character's
    /// homebrew"), as computeSheet does. A homebrew that fails to load gives a sheet of empty
    /// `values` and its `homebrew-error`s ([`Session::sheet_json`]).
    #[tracing::instrument(name = "session.open", level = "info", skip_all, fields(character = %character.id))]
    pub fn open(&mut self, character: &Character, competing: &[String]) -> CharacterId {
        let mut file = character.clone();
        file.competing.extend(competing.iter().cloned());
        let open = self.load(file);
        // A closed character's place in the list is taken first, so it stays as long as the most
        // characters ever open at once.
        let free = self.open.iter().position(Option::is_none);
        let index = match free {
            Some(index) => {
                self.generations[index] += 1;
                index
            }
            None => {
                self.open.push(None);
                self.generations.push(0);
                self.open.len() - 1
            }
        };
        self.open[index] = Some(open);
        CharacterId::new(index, self.generations[index])
    }

    /// The ruleset `character` computes on: the session's with its homebrew loaded on top, or the
    /// session's and the `homebrew-error`s when the homebrew fails to load.
    /// A file written for a newer spec is refused as a homebrew that fails is: nothing is
    /// computed but the error (decisions.md, "Character files").
    fn rules_of(&self, character: &Character) -> (Arc<Ruleset>, Vec<serde_json::Value>) {
        if let Some(error) = crate::file_check::spec_version_error(character) {
            // EC "A character's homebrew": the section is a pack release with the character's
            // `specVersion`, and a load error of it is `homebrew-error` with `data.cause` the load
            // code and `path: /homebrew` for one without a document.
            if character.homebrew.is_some() {
                let error = serde_json::json!({
                    "code": "homebrew-error",
                    "message": format!("homebrew: {}", error["message"].as_str().unwrap_or("")),
                    "path": "/homebrew",
                    "data": { "cause": error["code"], "detail": error["data"] },
                });
                return (self.ruleset.clone(), vec![error]);
            }
            return (self.ruleset.clone(), vec![error]);
        }
        match &character.homebrew {
            None => (self.ruleset.clone(), Vec::new()),
            Some(_) => match ocf_load::load_homebrew(&self.ruleset, character) {
                Ok(ruleset) => (Arc::new(ruleset), Vec::new()),
                Err(errors) => (
                    self.ruleset.clone(),
                    errors
                        .iter()
                        .map(|e| serde_json::to_value(e).unwrap_or_default())
                        .collect(),
                ),
            },
        }
    }

    /// `file` (its `competing` holding the call's too) loaded into a database of its own.
    fn load(&self, file: Character) -> Open {
        let db = if self.logged {
            Database::with_execution_log()
        } else {
            Database::default()
        };
        let (rules, homebrew_errors) = self.rules_of(&file);
        let ruleset = RulesetInput::load(&db, rules.clone());
        let view = crate::load::view(&rules, &file);
        let input =
            CharacterInput::load_as_is(&db, ruleset, &view.character, &[], view.errors, view.kept);
        let rounds = crate::standard::needs_rounds(&rules);
        Open {
            db,
            input,
            homebrew_errors,
            held: Held { file, rounds },
            reported: None,
            slots: Slots::default(),
            writes: 0,
            kept: None,
        }
    }

    /// The character `id` while it is open.
    fn get(&self, id: CharacterId) -> Result<&Open, EditError> {
        match self.generations.get(id.index()) {
            Some(generation) if *generation == id.generation() => self.open[id.index()]
                .as_ref()
                .ok_or(EditError::UnknownCharacter),
            _ => Err(EditError::UnknownCharacter),
        }
    }

    fn get_mut(&mut self, id: CharacterId) -> Result<&mut Open, EditError> {
        match self.generations.get(id.index()) {
            Some(generation) if *generation == id.generation() => {
                let open = self.open[id.index()]
                    .as_mut()
                    .ok_or(EditError::UnknownCharacter)?;
                open.writes += 1;
                if open.writes == 1 {
                    // The handle's query stack keeps each frame as wide as the widest query that
                    // ran at its depth, and clearing a frame costs its width: after a first
                    // sheet, whose queries read thousands of memos, every narrow query an edit
                    // re-runs would clear thousands of slots (12 % of an edit at 20 000 fields,
                    // issue 11). A new handle on the same storage starts with narrow frames.
                    open.db = open.db.clone();
                }
                Ok(open)
            }
            _ => Err(EditError::UnknownCharacter),
        }
    }

    /// Keeps `sheet` as the sheet of `id` until its next write: listOptions, whose trials set
    /// inputs and put them back as they were. Its next base sheet is then this one, where reading
    /// it from the database would re-check every memo of the sheet (the last trial's pick was a
    /// change to salsa, though the inputs now equal the base's).
    pub(crate) fn keep_sheet(&mut self, id: CharacterId, sheet: crate::sheet::Sheet) {
        if let Ok(open) = self.get_mut(id) {
            open.kept = Some((open.writes, sheet));
        }
    }

    /// The `homebrew-error`s of an open character's homebrew (empty when it loaded).
    pub fn homebrew_errors(&self, id: CharacterId) -> &[serde_json::Value] {
        self.get(id)
            .map_or(&[], |open| open.homebrew_errors.as_slice())
    }

    /// Forgets a character: its database is dropped, and with it everything the character held.
    /// Whatever else is open is untouched. An ID closed may be given to the next character opened.
    #[tracing::instrument(name = "session.close", level = "info", skip_all, fields(character = id.0))]
    pub fn close(&mut self, id: CharacterId) {
        if self.get(id).is_ok() {
            self.open[id.index()] = None;
        }
    }

    /// The database input of an open character, for queries run through [`Session::deep`].
    pub fn character_input(&self, id: CharacterId) -> Option<CharacterInput> {
        self.get(id).ok().map(|open| open.input)
    }

    /// Runs `f` on the database of character `id`, on the session's worker thread, whose stack
    /// holds [`crate::field::MAX_FIELD_DEPTH`] nested field computations, with the database lent
    /// to it until `f` returns ([`Lent`]); or, for a session without one
    /// ([`Session::on_callers_thread`]), on the calling thread.
    pub fn deep<T: Send + 'static>(
        &self,
        id: CharacterId,
        f: impl FnOnce(&Database) -> T + Send + 'static,
    ) -> Result<T, EditError> {
        let Some(worker) = &self.worker else {
            return Ok(f(&self.get(id)?.db));
        };
        let db = Lent(&self.get(id)?.db);
        let (reply, answer) = std::sync::mpsc::channel();
        // The worker's work belongs to the caller's span (a sheet, an edit), not to no span.
        let span = tracing::Span::current();
        let job: Job = Box::new(move || {
            let _entered = span.enter();
            // SAFETY: the caller waits below until the job has replied.
            let db = unsafe { db.get() };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(db)));
            let _ = reply.send(result);
        });
        worker.send(job);
        let answer = answer.recv();
        worker.done();
        match answer {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(_) => panic!("the sheet worker thread stopped"),
        }
    }
}
