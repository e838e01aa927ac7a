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

use std::sync::Arc;

use ocf_model::{AppliedEntry, Character, CopyEntry, Literal, PickEntry, Ruleset};
use salsa::Setter;

use crate::db::field_value;
use crate::db::{CharacterInput, CopyInput, Database, FieldKey, FieldValue, RulesetInput};

use crate::input::{CopyList, Slots};
use crate::sheet_changes::SheetChanges;

/// The stack of the thread sheets are computed on: room for [`crate::field::MAX_FIELD_DEPTH`]
/// nested field computations in a debug build (reserved, not committed, until used).
pub const DEEP_STACK: usize = 1 << 30;

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

/// A character's database lent to the worker thread for one job, rather than a clone of it: a
/// clone is a new salsa handle whose query stack starts empty and grows again in every call
/// (about 7 % of an edit's instructions, issue 11), where the lent database keeps its own.
struct Lent(*const Database);

// SAFETY: `Database` is `Send` (checked below). The thread that lends it waits until the job has
// replied (`Session::deep`), touching neither the database nor any reference into it meanwhile,
// and no other thread holds one: were `Database` not `Sync`, the session that owns it couldn't be
// shared. The worker has it as if it had been moved there and back, one thread at a time.
unsafe impl Send for Lent {}

const _: () = {
    const fn sendable<T: Send>() {}
    sendable::<Database>();
};

impl Lent {
    /// # Safety
    /// Only while the lender waits for the job that holds it.
    unsafe fn get(&self) -> &Database {
        // SAFETY: the lender keeps the database alive and untouched while it waits.
        unsafe { &*self.0 }
    }
}

/// A job for the worker thread.
type Job = Box<dyn FnOnce() + Send>;

/// The threads with a deep stack that run the sessions' queries, shared by every session of the
/// process: each thread reserves [`DEEP_STACK`] of address space, so one per session made six open
/// sessions reserve 6 GiB (issue 35). A thread is started when a job finds none idle, up to the
/// machine's parallelism, so one caller at a time (a command line) has one, and a service's
/// callers on several threads still run side by side. A thread started is kept for later jobs
/// (spawning one costs about as much as recomputing a few fields).
struct Pool {
    jobs: std::sync::Mutex<std::sync::mpsc::Sender<Job>>,
    queue: Arc<std::sync::Mutex<std::sync::mpsc::Receiver<Job>>>,
    /// Jobs sent whose caller hasn't had its answer yet, and threads started.
    busy: std::sync::atomic::AtomicUsize,
    started: std::sync::atomic::AtomicUsize,
    most: usize,
}

impl Pool {
    fn get() -> &'static Pool {
        static POOL: std::sync::OnceLock<Pool> = std::sync::OnceLock::new();
        POOL.get_or_init(|| {
            let (jobs, queue) = std::sync::mpsc::channel::<Job>();
            Pool {
                jobs: std::sync::Mutex::new(jobs),
                queue: Arc::new(std::sync::Mutex::new(queue)),
                busy: std::sync::atomic::AtomicUsize::new(0),
                started: std::sync::atomic::AtomicUsize::new(0),
                most: std::thread::available_parallelism().map_or(2, |n| n.get()),
            }
        })
    }

    /// Queues `job`, starting a thread when more callers wait than there are threads; the
    /// caller calls [`Pool::done`] once it has its answer.
    fn send(&self, job: Job) {
        use std::sync::atomic::Ordering::SeqCst;
        let busy = self.busy.fetch_add(1, SeqCst) + 1;
        let started = self.started.load(SeqCst);
        if busy > started && started < self.most {
            self.start();
        }
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let _ = jobs.send(job);
    }

    fn done(&self) {
        self.busy.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }

    fn start(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        let n = self.started.fetch_add(1, SeqCst);
        let queue = self.queue.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("ocf-sheet-{n}"))
            .stack_size(DEEP_STACK)
            .spawn(move || {
                loop {
                    let job = {
                        let queue = queue.lock().unwrap_or_else(|e| e.into_inner());
                        queue.recv()
                    };
                    match job {
                        Ok(job) => job(),
                        Err(_) => break,
                    }
                }
            });
        if spawned.is_err() {
            // No thread could be made: the jobs wait for a running one, or run nowhere and
            // the caller's wait ends with the worker's stop (at least one thread must run).
            self.started.fetch_sub(1, SeqCst);
            assert!(n > 0, "spawning the sheet worker thread");
        }
    }
}

/// A session's access to the shared [`Pool`].
struct Worker;

impl Worker {
    fn start() -> Worker {
        Pool::get();
        Worker
    }

    fn send(&self, job: Job) {
        Pool::get().send(job);
    }

    fn done(&self) {
        Pool::get().done();
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
        let view = crate::standard::standard_view(&rules, &file);
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

    /// Sets (or, with `None`, clears) an input field's saved value: one input set (decisions.md,
    /// "Durability"). The held file saves it under the ID it was written with. Only when the
    /// character's ruleset has activation rounds can a value change its standard copies or kept
    /// templates (an activation condition reads input fields), and only then are they found again.
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "set_value", character = id.0, field = field))]
    pub fn set_value(
        &mut self,
        id: CharacterId,
        field: &str,
        value: Option<Literal>,
    ) -> Result<(), EditError> {
        let open = self.get_mut(id)?;
        let c = open.input;
        let ruleset = c.ruleset(&open.db).ruleset(&open.db).clone();
        let held = &mut open.held;
        // A bare field ID resolves as the file's keys do (decisions.md, "Saved values by bare ID").
        let field = crate::input::qualify_saved(&ruleset, &held.file, field);
        let file = &held.file;
        // The key as written: the qualified ID itself most often (found without a walk of every
        // saved value, whose cost would grow with the sheet), else a bare ID resolving to it.
        let key = if file.values.0.contains_key(&field) {
            field.clone()
        } else {
            file.values
                .0
                .keys()
                .find(|written| crate::input::qualify_saved(&ruleset, file, written) == field)
                .cloned()
                .unwrap_or_else(|| field.clone())
        };
        let takes = |v: &Literal| crate::file_check::takes_saved(&ruleset, &field, v);
        // A value the engines don't take (an unknown or derived field's, one of the wrong type) is
        // an error of the file and is left out, as a fresh open would (crate::file_check): the
        // file's errors are found again when the edit makes or mends one.
        let mended = held.file.values.get(&key).is_some_and(|old| !takes(old));
        let broken = value.as_ref().is_some_and(|v| !takes(v));
        match &value {
            Some(value) => {
                held.file.values.0.insert(key, value.clone());
            }
            None => {
                held.file.values.0.shift_remove(&key);
            }
        }
        let rounds = held.rounds;
        c.save_value(&mut open.db, &field, value.filter(|v| takes(v)));
        if rounds || mended || broken {
            open.sync_structure();
        }
        Ok(())
    }

    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "add_copy", character = id.0))]
    pub fn add_copy(
        &mut self,
        id: CharacterId,
        list: CopyList,
        entry: &CopyEntry,
    ) -> Result<(), EditError> {
        self.get_mut(id)?.edit_file(|file, _| {
            match list {
                CopyList::Features => file.features.push(entry.clone()),
                CopyList::Inventory => file.inventory.push(entry.clone()),
            }
            Ok(())
        })
    }

    /// Removes a copy from the file. An unsaved standard copy can't be removed: it is there while
    /// the content holding it is active ([`EditError::StandardCopy`]).
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "remove_copy", character = id.0))]
    pub fn remove_copy(&mut self, id: CharacterId, copy_id: &str) -> Result<(), EditError> {
        self.get_mut(id)?.edit_file(|file, unsaved| {
            for list in [&mut file.features, &mut file.inventory] {
                if let Some(pos) = list.iter().position(|x| x.id == copy_id) {
                    list.remove(pos);
                    return Ok(());
                }
            }
            Err(match unsaved(copy_id) {
                Some(_) => EditError::StandardCopy(copy_id.to_owned()),
                None => EditError::UnknownCopy(copy_id.to_owned()),
            })
        })
    }

    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "equip", character = id.0))]
    pub fn equip(
        &mut self,
        id: CharacterId,
        copy_id: &str,
        equipped: bool,
    ) -> Result<(), EditError> {
        self.get_mut(id)?.edit_copy(copy_id, |entry| {
            // Unequipping writes `false` only where the file wrote the flag.
            entry.equipped = if equipped {
                Some(true)
            } else {
                entry.equipped.map(|_| false)
            };
        })
    }

    /// Sets one state key of a copy (`None` removes it).
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "set_state", character = id.0))]
    pub fn set_state(
        &mut self,
        id: CharacterId,
        copy_id: &str,
        key: &str,
        value: Option<Literal>,
    ) -> Result<(), EditError> {
        self.get_mut(id)?.edit_copy(copy_id, |entry| match value {
            Some(v) => {
                entry.state.0.insert(key.to_owned(), v);
            }
            None => {
                entry.state.0.shift_remove(key);
            }
        })
    }

    /// Replaces the picks of a choice: a copy's (`copy_id`), or a rules-level one (`None`).
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "pick", character = id.0))]
    pub fn pick(
        &mut self,
        id: CharacterId,
        copy_id: Option<&str>,
        choice: &str,
        picks: Vec<PickEntry>,
    ) -> Result<(), EditError> {
        let update = |tree: &mut ocf_model::Picks| {
            if picks.is_empty() {
                tree.0.shift_remove(choice);
            } else {
                tree.0.insert(choice.to_owned(), picks.clone());
            }
        };
        let open = self.get_mut(id)?;
        match copy_id {
            Some(copy_id) => open.edit_copy(copy_id, |entry| update(&mut entry.choices)),
            None => open.edit_file(|file, _| {
                update(&mut file.choices);
                Ok(())
            }),
        }
    }

    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "set_applied", character = id.0))]
    pub fn set_applied(
        &mut self,
        id: CharacterId,
        applied: Vec<AppliedEntry>,
    ) -> Result<(), EditError> {
        self.get_mut(id)?.edit_file(|file, _| {
            file.applied = applied;
            Ok(())
        })
    }

    /// The views passed for link slots (`{ slot: { id, values } }`), replacing earlier ones. They
    /// are the call's, not the file's: the held file keeps its saved links.
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "set_links", character = id.0))]
    pub fn set_links(
        &mut self,
        id: CharacterId,
        links: serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), EditError> {
        let open = self.get_mut(id)?;
        let c = open.input;
        let links: rustc_hash::FxHashMap<String, serde_json::Value> = links.into_iter().collect();
        if **c.passed_links(&open.db) != links {
            c.set_passed_links(&mut open.db).to(Arc::new(links));
        }
        Ok(())
    }

    /// Replaces the picks among competing options (the file's and the call's at open).
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "set_competing", character = id.0))]
    pub fn set_competing(&mut self, id: CharacterId, picks: Vec<String>) -> Result<(), EditError> {
        self.get_mut(id)?.edit_file(|file, _| {
            file.competing = picks;
            Ok(())
        })
    }

    /// Brings an open character to `file`, setting only the inputs that differ: a saved value, a
    /// copy's property, a list, the applied entries, the picks. What `ocf watch` calls on each save.
    /// A changed `homebrew` reloads the character ([`Session::reload_homebrew`]).
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "update", character = id.0))]
    pub fn update(&mut self, id: CharacterId, file: &Character) -> Result<(), EditError> {
        let open = self.get(id)?;
        if open.held.file.homebrew != file.homebrew
            || open.held.file.spec_version != file.spec_version
        {
            self.reload_homebrew(id, file);
            return Ok(());
        }
        self.get_mut(id)?.update(file);
        Ok(())
    }

    /// Puts `file` in place of character `id` on its new homebrew, loaded as [`Session::open`]
    /// loads it, with its `homebrew-error`s when it fails (decisions.md, "`Session::open` loads
    /// the character's homebrew"). Every input of the character hangs on its ruleset (the
    /// copies', the saved values' resolution, the standard copies), so the character is loaded
    /// afresh in a new database, keeping only its passed links; the session's other characters
    /// are untouched.
    fn reload_homebrew(&mut self, id: CharacterId, file: &Character) {
        let Ok(old) = self.get(id) else {
            return;
        };
        let links = old.input.passed_links(&old.db).clone();
        let mut open = self.load(file.clone());
        if !links.is_empty() {
            open.input.set_passed_links(&mut open.db).to(links);
        }
        self.open[id.index()] = Some(open);
    }

    /// Gives back what the characters derived in character `id`'s database left there (an
    /// action's proposed sheets, [`crate::db::CharacterInput::derive`]) once they outgrow the
    /// character: salsa never frees an input, so the character is loaded afresh in a new
    /// database from the file it holds, with its passed links and the sheet [`Session::changes`]
    /// last reported. Its memos go with the old database: the next read computes the sheet
    /// again, once per [`RECLAIM_AFTER`] times the character's own inputs. Whether it did; a
    /// [`CharacterInput`] of the character taken before is then stale
    /// ([`Session::character_input`] gives the new one).
    pub fn reclaim(&mut self, id: CharacterId) -> Result<bool, EditError> {
        let open = self.get(id)?;
        let file = &open.held.file;
        let own = 1 + file.values.len() + file.inventory.len() + file.features.len();
        if open.db.derived() <= RECLAIM_AFTER * own.max(RECLAIM_FLOOR) {
            return Ok(false);
        }
        let _span = tracing::info_span!(
            "session.reclaim",
            character = id.0,
            derived = open.db.derived()
        )
        .entered();
        let reported = open.reported.clone();
        let file = file.clone();
        let old = open.db.clone();
        self.reload_homebrew(id, &file);
        if let Ok(open) = self.get_mut(id) {
            open.reported = reported;
            // What a caller kept for the character (an action's proposed-sheet session) is
            // still the character's: the file is the same.
            old.pass_kept(&open.db);
        }
        Ok(true)
    }

    /// The sheet: every field's value, the effects, activations and issues. Its
    /// [`Sheet::to_json`](crate::sheet::Sheet::to_json) is computeSheet's output.
    #[tracing::instrument(name = "session.sheet", level = "info", skip_all, fields(character = id.0))]
    pub fn sheet(&self, id: CharacterId) -> Result<crate::sheet::Sheet, EditError> {
        let open = self.get(id)?;
        if let Some((writes, sheet)) = &open.kept
            && *writes == open.writes
        {
            return Ok(sheet.clone());
        }
        let c = open.input;
        self.deep(id, move |db| crate::sheet::collect(db, c))
    }

    /// What changed on the sheet of `id` since the last call for it: the fields whose values
    /// changed and which other parts of the sheet changed ([`SheetChanges`]); the first call
    /// reports the sheet whole. Computes what the edits since then reached, and compares the
    /// memos it reads with those it reported by pointer: the cost follows what changed, not the
    /// sheet's size.
    #[tracing::instrument(name = "session.changes", level = "info", skip_all, fields(character = id.0))]
    pub fn changes(&mut self, id: CharacterId) -> Result<SheetChanges, EditError> {
        let c = self.get(id)?.input;
        if !self.homebrew_errors(id).is_empty() {
            let failed = self.sheet_json(id)?;
            return Ok(SheetChanges::failed(failed));
        }
        let now = self.deep(id, move |db| crate::sheet::parts(db, c))?;
        let before = self.get_mut(id)?.reported.replace(now.clone());
        Ok(match before {
            Some(old) => SheetChanges::between(&old, now),
            None => SheetChanges::whole(now),
        })
    }

    /// computeSheet's output, as JSON.
    pub fn sheet_json(&self, id: CharacterId) -> Result<serde_json::Value, EditError> {
        let errors = &self.get(id)?.homebrew_errors;
        if !errors.is_empty() {
            return Ok(serde_json::json!({
                "values": {},
                "competing": [],
                "effects": [],
                "activations": [],
                "offers": [],
                "issues": [],
                "errors": errors,
            }));
        }
        Ok(self.sheet(id)?.to_json())
    }

    /// One field's value, computing only what it reads.
    #[tracing::instrument(name = "session.field", level = "debug", skip_all, fields(character = id.0, field = field))]
    pub fn field(&self, id: CharacterId, field: &str) -> Result<Arc<FieldValue>, EditError> {
        let open = self.get(id)?;
        let c = open.input;
        // A name the ruleset doesn't declare (a client's, untrusted) is answered without a key: an
        // interned key made outside any query stays for the database's life (issue 19).
        if c.ruleset(&open.db).ruleset(&open.db).field(field).is_none() {
            return Ok(Arc::new(crate::field::unknown_field(field)));
        }
        let field = field.to_owned();
        self.deep(id, move |db| {
            let key = FieldKey::new(db, c, &*field);
            field_value(db, key).clone()
        })
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

    /// How many memos and salsa structs (inputs, interned keys) the databases hold: what a long
    /// session must keep bounded. Waits for no one: the worker holds no database between calls.
    pub fn stored(&mut self) -> usize {
        self.records().total()
    }

    /// How many records the databases hold of each query's memos and of each salsa struct, by
    /// name, for finding what a long session keeps: `(name, count)`, sorted by name.
    pub fn records_by_name(&mut self) -> Vec<(String, usize)> {
        let mut named: std::collections::BTreeMap<String, usize> = Default::default();
        for open in self.open.iter_mut().flatten() {
            let info = (&mut open.db as &mut dyn salsa::Database).memory_usage();
            for (name, q) in &info.queries {
                *named.entry(name.to_string()).or_default() += q.count();
            }
            for s in &info.structs {
                *named.entry(s.debug_name().to_string()).or_default() += s.count();
            }
        }
        named.into_iter().collect()
    }

    /// The records the databases hold, by kind ([`Stored`]).
    pub fn records(&mut self) -> Stored {
        let mut stored = Stored::default();
        for open in self.open.iter_mut().flatten() {
            stored.free_slots += open.slots.free();
            let info = (&mut open.db as &mut dyn salsa::Database).memory_usage();
            stored.memos += info.queries.values().map(|q| q.count()).sum::<usize>();
            for s in &info.structs {
                if INPUTS.contains(&s.debug_name()) {
                    stored.inputs += s.count();
                } else {
                    stored.interned += s.count();
                }
            }
        }
        stored
    }

    /// The queries run since the last call, character after character (empty unless made
    /// [`Session::with_execution_log`]).
    pub fn take_executed(&self) -> Vec<String> {
        let open = self.open.iter().flatten();
        open.flat_map(|open| open.db.take_executed()).collect()
    }

    /// The memos checked and kept since the last call, character after character (empty unless
    /// made [`Session::with_execution_log`]).
    pub fn take_validated(&self) -> Vec<String> {
        let open = self.open.iter().flatten();
        open.flat_map(|open| open.db.take_validated()).collect()
    }

    /// The file an open character holds: as opened, with the session's edits, and no unsaved
    /// standard copy or kept template; what a player would save.
    pub fn file(&self, id: CharacterId) -> Result<&Character, EditError> {
        self.get(id).map(|open| &open.held.file)
    }
}

impl Open {
    /// Brings the inputs to `file` (on the same homebrew), setting only those that differ.
    fn update(&mut self, file: &Character) {
        let c = self.input;
        let ruleset = c.ruleset(&self.db).ruleset(&self.db).clone();
        if let Some(changed) = values_only_edit(&ruleset, &self.held.file, file) {
            // The same file (a batch's closing sync after its last change's): nothing to set.
            if changed.is_empty() {
                return;
            }
            // Everything but the values is the same (values_only_edit compared it): the held file
            // takes the new values alone, not a copy of the whole file (its copies, applied entries).
            self.held.file.values = file.values.clone();
            for (field, new) in changed {
                let now = c
                    .saved(&self.db)
                    .get(&field)
                    .and_then(|h| h.value(&self.db).clone());
                if now != new {
                    c.save_value(&mut self.db, &field, new);
                }
            }
            return;
        }
        self.held.file = file.clone();
        // Saved values: every field saved before or now.
        let mut wanted: rustc_hash::FxHashMap<String, Literal> = Default::default();
        for (field, value) in file.values.iter() {
            let key = crate::input::qualify_saved(&ruleset, file, field);
            wanted.insert(key, value.clone());
        }
        let mut fields: Vec<String> = c.saved(&self.db).keys().cloned().collect();
        fields.extend(wanted.keys().cloned());
        fields.sort();
        fields.dedup();
        for field in fields {
            let now = c
                .saved(&self.db)
                .get(&field)
                .and_then(|h| h.value(&self.db).clone());
            // What the engines don't take is left out, as at open (crate::file_check).
            let new = wanted
                .get(&field)
                .filter(|v| crate::file_check::takes_saved(&ruleset, &field, v))
                .cloned();
            if now != new {
                c.save_value(&mut self.db, &field, new);
            }
        }
        self.sync_structure();
    }

    /// Edits the held file with `edit` (given the file, and a look-up of the unsaved standard
    /// copies by ID), then brings the inputs to it.
    fn edit_file(
        &mut self,
        edit: impl FnOnce(
            &mut Character,
            &dyn Fn(&str) -> Option<(CopyList, String)>,
        ) -> Result<(), EditError>,
    ) -> Result<(), EditError> {
        let c = self.input;
        let db = &self.db;
        let held = &mut self.held;
        // The inputs hold the file's copies and the unsaved standard copies: a copy the inputs
        // hold and the file doesn't is an unsaved standard copy.
        let saved: rustc_hash::FxHashSet<String> = held
            .file
            .features
            .iter()
            .chain(&held.file.inventory)
            .map(|e| e.id.clone())
            .collect();
        let unsaved = |copy_id: &str| {
            if saved.contains(copy_id) {
                return None;
            }
            c.features(db)
                .iter()
                .chain(c.inventory(db).iter())
                .find(|x| x.id(db) == copy_id)
                .map(|x| (x.list(db), x.item(db).clone()))
        };
        edit(&mut held.file, &unsaved)?;
        self.sync_structure();
        Ok(())
    }

    /// Edits a copy's entry in the held file. An edit of an unsaved standard copy saves it: its
    /// entry `{ id, item }` goes after the file's entries of its list, where it already stands
    /// (EC: "An entry with a standard copy's ID and item is that copy, saved, in its place").
    fn edit_copy(
        &mut self,
        copy_id: &str,
        edit: impl FnOnce(&mut CopyEntry),
    ) -> Result<(), EditError> {
        self.edit_file(|file, unsaved| {
            let found = file
                .features
                .iter_mut()
                .chain(file.inventory.iter_mut())
                .find(|x| x.id == copy_id);
            if let Some(entry) = found {
                edit(entry);
                return Ok(());
            }
            let (list, item) =
                unsaved(copy_id).ok_or_else(|| EditError::UnknownCopy(copy_id.to_owned()))?;
            let mut entry = CopyEntry::new(copy_id.to_owned(), item.as_str());
            edit(&mut entry);
            match list {
                CopyList::Features => file.features.push(entry),
                CopyList::Inventory => file.inventory.push(entry),
            }
            Ok(())
        })
    }

    /// Brings the character's inputs, all but its saved values, to its held file as the engines
    /// see it: with its standard copies and kept templates, found in rounds on the file as it now
    /// is (EC, "Standard copies"). Sets only what differs, so an edit that changes nothing else
    /// invalidates nothing else.
    fn sync_structure(&mut self) {
        let c = self.input;
        let ruleset_input = c.ruleset(&self.db);
        let ruleset = ruleset_input.ruleset(&self.db).clone();
        let crate::standard::StandardView {
            character: file,
            errors,
            kept,
        } = crate::standard::standard_view(&ruleset, &self.held.file);
        if **c.errors(&self.db) != errors {
            c.set_errors(&mut self.db).to(Arc::new(errors));
        }
        if **c.kept(&self.db) != kept {
            c.set_kept(&mut self.db).to(Arc::new(kept));
        }
        // Copies: reuse each copy by its instance ID and item, setting only what changed.
        for (list, entries) in [
            (CopyList::Features, &file.features),
            (CopyList::Inventory, &file.inventory),
        ] {
            let old = match list {
                CopyList::Features => c.features(&self.db).clone(),
                CopyList::Inventory => c.inventory(&self.db).clone(),
            };
            // Each old copy is reused once, by the first entry with its ID and item; the copies
            // left over are removed, and their inputs serve the entries that are new.
            let mut reusable: rustc_hash::FxHashMap<(String, String), Vec<CopyInput>> =
                Default::default();
            for copy in old.iter().rev() {
                let key = (copy.id(&self.db).clone(), copy.item(&self.db).clone());
                reusable.entry(key).or_default().push(*copy);
            }
            let mut copies = Vec::with_capacity(entries.len());
            let mut changed = Vec::new();
            let mut new = Vec::new();
            for (index, entry) in entries.iter().enumerate() {
                let key = (entry.id.clone(), entry.item.0.clone());
                match reusable.get_mut(&key).and_then(Vec::pop) {
                    Some(copy) => {
                        changed.push((copy, entry));
                        copies.push(Some(copy));
                    }
                    None => {
                        new.push((index, entry));
                        copies.push(None);
                    }
                }
            }
            for copy in reusable.into_values().flatten() {
                self.slots.free_copy(copy);
            }
            for (copy, entry) in changed {
                sync_copy(&mut self.db, copy, entry);
            }
            for (index, entry) in new {
                copies[index] = Some(self.slots.copy(&mut self.db, ruleset_input, list, entry));
            }
            let copies: Vec<CopyInput> = copies.into_iter().flatten().collect();
            if *old != copies {
                match list {
                    CopyList::Features => c.set_features(&mut self.db).to(Arc::new(copies)),
                    CopyList::Inventory => c.set_inventory(&mut self.db).to(Arc::new(copies)),
                };
            }
        }
        if **c.applied(&self.db) != file.applied {
            c.set_applied(&mut self.db)
                .to(Arc::new(file.applied.clone()));
        }
        if **c.choices(&self.db) != file.choices {
            c.set_choices(&mut self.db)
                .to(Arc::new(file.choices.clone()));
        }
        if **c.competing(&self.db) != file.competing {
            c.set_competing(&mut self.db)
                .to(Arc::new(file.competing.clone()));
        }
        let saved_links: rustc_hash::FxHashMap<String, String> = file
            .links
            .iter()
            .map(|(k, v)| (k.to_owned(), v.clone()))
            .collect();
        if **c.saved_links(&self.db) != saved_links {
            c.set_saved_links(&mut self.db).to(Arc::new(saved_links));
        }
        if **c.follow_ups(&self.db) != file.follow_ups {
            c.set_follow_ups(&mut self.db)
                .to(Arc::new(file.follow_ups.clone()));
        }
        let creating = file.creating.unwrap_or(false);
        if c.creating(&self.db) != creating {
            c.set_creating(&mut self.db).to(creating);
        }
    }
}

/// The salsa structs of [`crate::input`] that are inputs; the database's other structs are
/// interned keys.
const INPUTS: [&str; 4] = ["RulesetInput", "CopyInput", "SavedValue", "CharacterInput"];

/// The records a session's databases hold ([`Session::records`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stored {
    /// Memos of tracked functions (values, or the dependencies of an evicted value).
    pub memos: usize,
    /// Inputs: rulesets, characters, copies, saved values; the free slots among them.
    pub inputs: usize,
    /// Interned keys (field keys, the hidden keys of queries with several arguments).
    pub interned: usize,
    /// Inputs of removed copies waiting to be reused (counted in `inputs`).
    pub free_slots: usize,
}

impl Stored {
    /// Memos, inputs and interned keys.
    pub fn total(&self) -> usize {
        self.memos + self.inputs + self.interned
    }
}

/// Sets each property of `copy` that differs from `entry`'s.
fn sync_copy(db: &mut Database, copy: CopyInput, entry: &CopyEntry) {
    let equipped = entry.equipped.unwrap_or(false);
    if copy.equipped(db) != equipped {
        copy.set_equipped(db).to(equipped);
    }
    let quantity = entry.quantity.unwrap_or(1);
    if copy.quantity(db) != quantity {
        copy.set_quantity(db).to(quantity);
    }
    if **copy.state(db) != entry.state {
        copy.set_state(db).to(Arc::new(entry.state.clone()));
    }
    let templates: Vec<String> = entry.templates.iter().map(|t| t.0.clone()).collect();
    if **copy.templates(db) != templates {
        copy.set_templates(db).to(Arc::new(templates));
    }
    if **copy.choices(db) != entry.choices {
        copy.set_choices(db).to(Arc::new(entry.choices.clone()));
    }
}

/// When `new` differs from the held file `old` only in saved values, each of them a value the
/// engines take before and after (so the file's errors and everything but those values stay as
/// they are): the changed fields, qualified, with their new values. `None` when the edit needs
/// [`Session::update`]'s full diff: anything else changed, or a changed key shares its field with
/// another key of the file (the full diff decides which one counts). An applyChanges batch of
/// adjusts and sets edits this way, so its cost follows the values it touched (issue 12).
fn values_only_edit(
    ruleset: &Ruleset,
    old: &Character,
    new: &Character,
) -> Option<Vec<(String, Option<Literal>)>> {
    let Character {
        id,
        spec_version,
        packs,
        creating,
        values: _,
        features,
        inventory,
        applied,
        choices,
        competing,
        links,
        follow_ups,
        homebrew,
        extensions,
    } = new;
    let same = *id == old.id
        && *spec_version == old.spec_version
        && *packs == old.packs
        && *creating == old.creating
        && *features == old.features
        && *inventory == old.inventory
        && *applied == old.applied
        && *choices == old.choices
        && *competing == old.competing
        && *links == old.links
        && *follow_ups == old.follow_ups
        && *homebrew == old.homebrew
        && *extensions == old.extensions;
    if !same {
        return None;
    }
    let keys = old
        .values
        .0
        .keys()
        .filter(|k| new.values.0.get(*k) != old.values.0.get(*k))
        .chain(
            new.values
                .0
                .keys()
                .filter(|k| !old.values.0.contains_key(*k)),
        );
    let mut changed = Vec::new();
    for key in keys {
        let field = crate::input::qualify_saved(ruleset, new, key);
        let alias = match field.split_once(':') {
            Some((_, local)) if *key == field => local,
            _ => field.as_str(),
        };
        if alias != key && (old.values.0.contains_key(alias) || new.values.0.contains_key(alias)) {
            return None;
        }
        let value = new.values.0.get(key);
        let takes = |v: Option<&Literal>| {
            v.is_none_or(|v| crate::file_check::takes_saved(ruleset, &field, v))
        };
        if !takes(old.values.0.get(key)) || !takes(value) {
            return None;
        }
        changed.push((field, value.cloned()));
    }
    Some(changed)
}
