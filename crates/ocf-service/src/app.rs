//! The service's state: one [`Session`] per ruleset, the characters open in them, and the store
//! behind them. Every operation here is synchronous (the engine's calls are CPU work); the HTTP
//! layer runs them off the async threads.
//!
//! Each open character has a lock of its own (and a session of its own, on its ruleset shared with
//! the others): requests on different characters never wait for each other, and the map of open
//! characters is held only to find or add one, never while the engine or the store works.
//!
//! An open character is a cache of its stored file: before any read or write the stored revision is
//! checked, and a character another instance changed is brought to the stored file first (its
//! subscribers are told). A write is made against the revision the client read; it is applied to the
//! session, saved over exactly that revision, and taken back if the store refuses it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};

use axum::http::StatusCode;
use ocf_engine::{CharacterId, Session};
use ocf_model::Character;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::accounts::Who;
use crate::changes::{Changes, diff, told};
use crate::error::ApiError;
use crate::guard::Settings;
use crate::rulesets::Rulesets;
use crate::states::Signer;
use crate::store::{Keep, Note, Ownership, Store};

/// What the service bounds, so that no client can make it hold unbounded memory.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Characters open at once; past it the least recently used one without subscribers is
    /// closed (it is stored, so nothing is lost), or the open is refused (`too-many-open`).
    pub max_open: usize,
    /// The largest request body, in bytes (a character file's own limit, 4 MiB, by default).
    pub max_body_bytes: usize,
    /// The longest character ID.
    pub max_id_len: usize,
    /// Saved values in a sent character.
    pub max_values: usize,
    /// Saved values of fields its ruleset does not declare (each is kept, and reported, but
    /// computes nothing).
    pub max_unknown_values: usize,
    /// Copies (features and inventory together), and applied entries, in a sent character.
    pub max_copies: usize,
    /// How much of each character's history (its revisions) is kept.
    pub history: Keep,
    /// The process's resident memory, in bytes, past which opening a character first closes
    /// least recently used unwatched ones (as many as the memory over the ceiling takes, at the
    /// open characters' mean cost); none when `None`.
    pub max_memory: Option<u64>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_open: 1000,
            max_body_bytes: 4 << 20,
            max_id_len: 200,
            max_values: 10_000,
            max_unknown_values: 1_000,
            max_copies: 10_000,
            history: Keep::default(),
            max_memory: None,
        }
    }
}

pub struct App {
    rulesets: Box<dyn Rulesets>,
    store: Box<dyn Store>,
    pub limits: Limits,
    /// The open characters, by ID: held only to find, add or remove one.
    open: Mutex<HashMap<String, Arc<Slot>>>,
    /// Counts uses, for closing the least recently used character.
    clock: AtomicU64,
    settings: RwLock<Settings>,
    /// The key that signs paused actions' states, read from the store on first use.
    signer: OnceLock<Signer>,
    /// Password checks at once: each Argon2id hash takes 19 MiB, so a flood of logins waits here
    /// instead of taking the machine's memory.
    pub logins: tokio::sync::Semaphore,
    /// Rolls asked of one character's player by another's action, until answered or withdrawn.
    pub asks: crate::asks::Kept,
    /// Each listed character's name at the revision it was read from (`list`).
    names: Mutex<HashMap<String, (u64, Option<String>)>>,
    /// The title field of each ruleset a listed character's pins name (`crate::names::pins`):
    /// a list asks for a ruleset once per pins, not once per character.
    titles: Mutex<HashMap<String, Option<ocf_model::Id>>>,
}

/// What a route needs of the character it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Read,
    Write,
}

/// A character's place among the open ones: its lock, its subscribers and when it was last used.
/// Empty until the first request that finds it opens it (under its lock, so a second one waits
/// for that open rather than making another).
struct Slot {
    character: Mutex<Option<OpenCharacter>>,
    events: broadcast::Sender<Event>,
    used: AtomicU64,
}

impl Slot {
    fn new(used: u64) -> Slot {
        let (events, _) = broadcast::channel(64);
        Slot {
            character: Mutex::new(None),
            events,
            used: AtomicU64::new(used),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<OpenCharacter>> {
        // The engine's calls catch their own panics on the session's worker; a panic here would be
        // a bug of the service, and the session it left is still consistent with the store.
        self.character.lock().unwrap_or_else(|p| p.into_inner())
    }
}

struct OpenCharacter {
    /// The ruleset's key ([`Rulesets::ruleset_for`]).
    key: String,
    /// A session of the character's own, on the ruleset it shares with the others.
    session: Session,
    id: CharacterId,
    revision: u64,
    /// The sheet as last sent: what the next change is told against. The session's last report
    /// of what changed ([`Session::changes`]) is of this sheet, so each write makes JSON of and
    /// compares only what it changed.
    sheet: Value,
}

/// A pushed event: `{ "kind": "changed", "id", "revision", "values", "removed", "parts" }`.
pub type Event = Arc<Value>;

impl App {
    pub fn new(rulesets: Box<dyn Rulesets>, store: Box<dyn Store>, limits: Limits) -> App {
        App {
            rulesets,
            store,
            limits,
            open: Mutex::new(HashMap::new()),
            clock: AtomicU64::new(0),
            settings: RwLock::new(Settings::new()),
            signer: OnceLock::new(),
            logins: tokio::sync::Semaphore::new(4),
            asks: crate::asks::Kept::default(),
            names: Mutex::new(HashMap::new()),
            titles: Mutex::new(HashMap::new()),
        }
    }

    pub fn settings(&self) -> Settings {
        self.settings
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn set_settings(&self, settings: Settings) {
        *self.settings.write().unwrap_or_else(|p| p.into_inner()) = settings;
    }

    pub fn store(&self) -> &dyn Store {
        &*self.store
    }

    /// The signer of states: its key is the store's `state-key`, made once for every instance.
    fn signer(&self) -> Result<&Signer, ApiError> {
        if let Some(signer) = self.signer.get() {
            return Ok(signer);
        }
        let fresh = crate::accounts::fresh_secret("").map_err(ApiError::internal)?;
        let key = self.store.setting("state-key", &fresh)?;
        Ok(self.signer.get_or_init(|| Signer::new(key.as_bytes())))
    }

    /// Refuses `who` a character it may not `need`: one it may not read is `not-found` (its
    /// existence is not told), one it reads but may not write is `forbidden`.
    pub fn authorize(&self, who: &Who, id: &str, need: Need) -> Result<(), ApiError> {
        let ownership = self
            .store
            .ownership(id)?
            .ok_or_else(|| ApiError::not_found("character", id))?;
        if !who.reads(&ownership) {
            return Err(ApiError::not_found("character", id));
        }
        if need == Need::Write && !who.writes(&ownership) {
            return Err(forbidden(format!(
                "{} `{}` may read `{id}` but not edit it or act for it",
                who.role.name(),
                who.name.as_deref().unwrap_or_default()
            )));
        }
        Ok(())
    }

    /// Gives a character to `owner` (a user's name, or none) and shares it or not: the
    /// gamemaster's call. `{ id, owner, shared }`.
    pub fn set_ownership(&self, id: &str, ownership: Ownership) -> Result<Value, ApiError> {
        if let Some(owner) = &ownership.owner
            && self.store.account(owner)?.is_none()
        {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "unknown-user",
                format!("no user `{owner}`"),
                "/owner",
            ));
        }
        if !self.store.set_ownership(id, &ownership)? {
            return Err(ApiError::not_found("character", id));
        }
        Ok(json!({ "id": id, "owner": ownership.owner, "shared": ownership.shared }))
    }

    /// Removes a stored character, whatever its file's state, and closes it. `{ id, deleted }`.
    pub fn delete(&self, id: &str) -> Result<Value, ApiError> {
        self.forget(id);
        self.asks.forget(id);
        self.names
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        if !self.store.delete(id)? {
            return Err(ApiError::not_found("character", id));
        }
        Ok(json!({ "id": id, "deleted": true }))
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Slot>>> {
        // Nothing panics while the map is held: it is only looked up, added to, removed from.
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Closes `id` if it is open: it leaves the map (a request working on it finishes on its copy,
    /// which the store's revisions keep honest). Whether it was open.
    fn forget(&self, id: &str) -> bool {
        let slot = self.lock().remove(id);
        match slot {
            // Its session is dropped here, outside the map's lock, once no request holds it.
            Some(slot) => {
                drop(slot);
                true
            }
            None => false,
        }
    }

    /// Removes `slot` from the map if it is still the one there for `id`.
    fn forget_slot(&self, id: &str, slot: &Arc<Slot>) {
        let mut open = self.lock();
        if open.get(id).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            open.remove(id);
        }
    }

    /// The slot of `id`, added (empty) when it is not open, room made for it first: the least
    /// recently used unwatched character is closed, or, every one being watched at the limit,
    /// `too-many-open`.
    fn slot(&self, id: &str) -> Result<Arc<Slot>, ApiError> {
        let now = self.tick();
        let mut open = self.lock();
        if let Some(slot) = open.get(id) {
            slot.used.store(now, Ordering::Relaxed);
            return Ok(slot.clone());
        }
        let mut closed = Vec::new();
        // Over the memory ceiling: as many characters closed as the excess takes, each taken to
        // cost the mean of the open ones (their memory is given back as their sessions drop).
        if let Some(ceiling) = self.limits.max_memory
            && let Some(resident) = resident_bytes()
            && resident > ceiling
            && !open.is_empty()
        {
            let each = (resident / open.len() as u64).max(1);
            let excess = (resident - ceiling).div_ceil(each) as usize;
            let mut idle: Vec<(u64, String)> = open
                .iter()
                .filter(|(_, s)| s.events.receiver_count() == 0)
                .map(|(id, s)| (s.used.load(Ordering::Relaxed), id.clone()))
                .collect();
            idle.sort();
            for (_, id) in idle.into_iter().take(excess.max(1)) {
                closed.extend(open.remove(&id));
            }
            tracing::info!(
                resident,
                ceiling,
                closed = closed.len(),
                "over the memory ceiling"
            );
        }
        while open.len() >= self.limits.max_open {
            let idle = open
                .iter()
                .filter(|(_, s)| s.events.receiver_count() == 0)
                .min_by_key(|(_, s)| s.used.load(Ordering::Relaxed))
                .map(|(id, _)| id.clone());
            match idle {
                Some(idle) => closed.extend(open.remove(&idle)),
                None => {
                    return Err(ApiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "too-many-open",
                        format!(
                            "{} characters are open and each is watched; close one first",
                            self.limits.max_open
                        ),
                        "",
                    )
                    .with("limit", self.limits.max_open));
                }
            }
        }
        let slot = Arc::new(Slot::new(now));
        open.insert(id.to_owned(), slot.clone());
        drop(open);
        // The closed characters' sessions go here, with the map free again.
        drop(closed);
        Ok(slot)
    }

    /// Runs `f` on the open character `id` at its stored revision, under its own lock only: opened
    /// from the store if it is not open, brought to the stored file if another writer moved it on
    /// (its subscribers told). A character whose stored file is gone or no longer loads is closed
    /// and refused as an open would be.
    fn with_current<R>(
        &self,
        id: &str,
        f: impl FnOnce(&mut OpenCharacter, &broadcast::Sender<Event>) -> Result<R, ApiError>,
    ) -> Result<R, ApiError> {
        loop {
            let slot = self.slot(id)?;
            let mut held = slot.lock();
            // Closed (or closed and opened again) while this request waited: find it again.
            if !self.lock().get(id).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
                continue;
            }
            let made = match held.take() {
                None => self.open_character(id),
                Some(c) => self.reload(id, c, &slot.events),
            };
            match made {
                Ok(c) => {
                    let c = held.insert(c);
                    return f(c, &slot.events);
                }
                Err(error) => {
                    drop(held);
                    self.forget_slot(id, &slot);
                    return Err(error);
                }
            }
        }
    }

    /// Every stored character `who` may read: `[{ id, revision, open, owner, shared, name }]`.
    pub fn list(&self, who: &Who) -> Result<Value, ApiError> {
        let stored = self.store.list()?;
        let readable: Vec<_> = stored
            .into_iter()
            .filter(|listed| who.reads(&listed.ownership))
            .collect();
        let names = self.names(&readable);
        let open = self.lock();
        Ok(Value::Array(
            readable
                .into_iter()
                .zip(names)
                .map(|(listed, name)| {
                    let is_open = open.contains_key(&listed.id);
                    json!({
                        "id": listed.id, "revision": listed.revision, "open": is_open,
                        "owner": listed.ownership.owner, "shared": listed.ownership.shared,
                        "name": name
                    })
                })
                .collect(),
        ))
    }

    /// The title field of the ruleset `character` computes on (`None` when it has none, or does
    /// not load), asked of the rulesets once per pins.
    fn title_field(&self, character: &Character) -> Option<ocf_model::Id> {
        let pins = crate::names::pins(character);
        let known = self
            .titles
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&pins)
            .cloned();
        if let Some(field) = known {
            return field;
        }
        // A ruleset that does not load gives no name, and is not asked for again by lists.
        let field = self
            .rulesets
            .ruleset_for(character)
            .ok()
            .and_then(|(_, ruleset)| crate::names::title_field(&ruleset));
        self.titles
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(pins, field.clone());
        field
    }

    /// Each listed character's name (`crate::names`): read from its stored file only when it
    /// moved on since the last list read it, no sheet computed.
    fn names(&self, listed: &[crate::store::Listed]) -> Vec<Option<String>> {
        let known = |l: &crate::store::Listed| {
            let names = self.names.lock().unwrap_or_else(|p| p.into_inner());
            names
                .get(&l.id)
                .filter(|(revision, _)| *revision == l.revision)
                .map(|(_, name)| name.clone())
        };
        listed
            .iter()
            .map(|l| {
                known(l).unwrap_or_else(|| {
                    let stored = self.store.load(&l.id).ok().flatten();
                    let name = stored.as_ref().and_then(|stored| {
                        let character = from_body(&stored.body).ok()?;
                        let field = self.title_field(&character)?;
                        crate::names::name(&character, &field)
                    });
                    let revision = stored.map_or(l.revision, |s| s.revision);
                    let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
                    names.insert(l.id.clone(), (revision, name.clone()));
                    name
                })
            })
            .collect()
    }

    /// Stores a new character under `id` (its file's `id` when not given) and opens it:
    /// `{ id, revision, sheet }`.
    /// The character is owned by `owner`.
    pub fn create(
        &self,
        id: Option<String>,
        character: Character,
        owner: Option<&str>,
        author: Option<&str>,
    ) -> Result<Value, ApiError> {
        let id = id.unwrap_or_else(|| character.id.clone());
        self.check_id(&id)?;
        // Refuse a character whose ruleset can't be made, or that costs too much to open, before
        // anything is stored.
        let (_, ruleset) = self
            .rulesets
            .ruleset_for(&character)
            .map_err(|errors| ApiError::many(StatusCode::UNPROCESSABLE_ENTITY, errors))?;
        self.check_cost(&character, &ruleset)?;
        let body = to_body(&character)?;
        // Room is made (or refused) before anything is stored: a refused create stores nothing.
        let slot = self.slot(&id)?;
        let note = self.note(author, "created".into());
        if let Err(error) = self.store.create_noted(&id, &body, owner, &note) {
            if slot.lock().is_none() {
                self.forget_slot(&id, &slot);
            }
            return Err(error.into());
        }
        match self.with_current(&id, |c, _| Ok(sheet_answer(c, &id))) {
            Ok(answer) => Ok(answer),
            Err(error) => {
                let _ = self.store.delete(&id);
                Err(error)
            }
        }
    }

    /// A character ID is a URL path segment the page can use and a reader can tell apart: 1 to
    /// `max_id_len` characters (not bytes), not `.` or `..`, with no `/`, `\\`, `?`, `#` or `%`, no
    /// space, control character or invisible formatting character (zero-width characters,
    /// right-to-left overrides), which would make look-alike IDs.
    fn check_id(&self, id: &str) -> Result<(), ApiError> {
        let count = id.chars().count();
        if count == 0
            || count > self.limits.max_id_len
            || id == "."
            || id == ".."
            || id.chars().any(|c| {
                c.is_control()
                    || c.is_whitespace()
                    || matches!(c, '/' | '\\' | '?' | '#' | '%')
                    || invisible(c)
            })
        {
            return Err(ApiError::bad_request(
                "invalid-id",
                format!(
                    "a character ID is 1 to {} characters, not `.` or `..`, with no `/`, `\\`, `?`, \
                     `#` or `%`, no space, control character or invisible formatting character",
                    self.limits.max_id_len
                ),
                "/id",
            ));
        }
        Ok(())
    }

    /// Refuses a sent character whose open would cost more than the limits allow, before it is
    /// stored or opened: too many saved values, too many of them unknown to the ruleset, too many
    /// copies or applied entries (the file's size and nesting are bounded as it is read).
    /// `safety-limit-exceeded` (422) at the list, with `data: { limit, value }`.
    fn check_cost(
        &self,
        character: &Character,
        ruleset: &ocf_model::Ruleset,
    ) -> Result<(), ApiError> {
        let values = character.values.0.len();
        let unknown = character
            .values
            .0
            .keys()
            .filter(|key| ruleset.field(key).is_none())
            .count();
        let copies = character.features.len() + character.inventory.len();
        let limits = &self.limits;
        for (count, limit, what, path) in [
            (
                values,
                limits.max_values,
                "saved values",
                "/character/values",
            ),
            (
                unknown,
                limits.max_unknown_values,
                "saved values of fields the ruleset does not declare",
                "/character/values",
            ),
            (
                copies,
                limits.max_copies,
                "copies (features and inventory)",
                "/character",
            ),
            (
                character.applied.len(),
                limits.max_copies,
                "applied entries",
                "/character/applied",
            ),
        ] {
            if count > limit {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "safety-limit-exceeded",
                    format!("the character has {count} {what}; the service takes at most {limit}"),
                    path,
                )
                .with("limit", limit)
                .with("value", count));
            }
        }
        Ok(())
    }

    /// `{ id, revision, sheet }`: computeSheet's output for the stored file.
    pub fn sheet(&self, id: &str) -> Result<Value, ApiError> {
        self.with_current(id, |c, _| Ok(sheet_answer(c, id)))
    }

    /// `{ id, revision, field, value }`: one field of the sheet. A bare field ID (no `pack:`) names
    /// the one field of that ID in any pack.
    pub fn field(&self, id: &str, field: &str) -> Result<Value, ApiError> {
        self.with_current(id, |c, _| self.field_of(c, id, field))
    }

    fn field_of(&self, c: &OpenCharacter, id: &str, field: &str) -> Result<Value, ApiError> {
        let values = c.sheet.get("values").and_then(Value::as_object);
        let found = values.and_then(|values| {
            values.get_key_value(field).or_else(|| {
                let suffix = format!(":{field}");
                let mut matching = values.iter().filter(|(k, _)| k.ends_with(&suffix));
                match (matching.next(), matching.next()) {
                    (Some(one), None) => Some(one),
                    _ => None,
                }
            })
        });
        match found {
            Some((key, value)) => Ok(json!({
                "id": id, "revision": c.revision, "field": key, "value": value
            })),
            None => Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "unknown-field",
                format!("the sheet of `{id}` has no field `{field}`"),
                "",
            )
            .with("field", field)),
        }
    }

    /// `{ id, revision, character }`: the stored file.
    /// Read from the store, whether or not the file still loads: a character whose packs are
    /// gone can still be read, fixed and deleted.
    pub fn file(&self, id: &str) -> Result<Value, ApiError> {
        let stored = self
            .store
            .load(id)?
            .ok_or_else(|| ApiError::not_found("character", id))?;
        let file: Value = serde_json::from_str(&stored.body)
            .map_err(|e| ApiError::internal(format!("the stored character does not read: {e}")))?;
        Ok(json!({ "id": id, "revision": stored.revision, "character": file }))
    }

    /// Sets (or, with `None`, clears) an input field's saved value, made against `revision`.
    /// A value the engine does not take (not an input field, the wrong type, out of range) is
    /// refused with the sheet's own error for it, and nothing changes. `{ id, revision, changes }`.
    pub fn set_value(
        &self,
        id: &str,
        revision: u64,
        field: &str,
        value: Option<Value>,
        author: Option<&str>,
    ) -> Result<Value, ApiError> {
        let what = match &value {
            Some(value) => format!("set {field} to {value}"),
            None => format!("cleared {field}"),
        };
        let note = self.note(author, what);
        // Only the edited value's own new errors refuse the edit: another field's saved value
        // that a moved bound now puts out of range is the sheet's `out-of-range` error, reported
        // and clamped (EC "Round and clamp"; decisions.md, issue 36).
        let own = |e: &Value| about_field(e, field);
        self.write(id, revision, &note, own, |session, cid| {
            session
                .set_value(cid, field, value)
                .map(|()| Value::Null)
                .map_err(|e| ApiError::internal(e.to_string()))
        })
    }

    /// Replaces the character's file with `character`, made against `revision`: what an app that
    /// edits the file as a whole sends. `{ id, revision, changes }`.
    /// The new file must load (as a create's must); the stored one need not: a file whose packs
    /// are gone is replaced without being opened.
    pub fn replace(
        &self,
        id: &str,
        revision: u64,
        character: Character,
        author: Option<&str>,
    ) -> Result<Value, ApiError> {
        let note = self.note(author, "replaced the file".into());
        self.replace_noted(id, revision, character, &note)
    }

    fn replace_noted(
        &self,
        id: &str,
        revision: u64,
        character: Character,
        note: &Note,
    ) -> Result<Value, ApiError> {
        let (key, ruleset) = self
            .rulesets
            .ruleset_for(&character)
            .map_err(|errors| ApiError::many(StatusCode::UNPROCESSABLE_ENTITY, errors))?;
        self.check_cost(&character, &ruleset)?;
        let stored = self
            .store
            .revision(id)?
            .ok_or_else(|| ApiError::not_found("character", id))?;
        if stored != revision {
            return Err(ApiError::conflict(id, revision, stored));
        }
        let slot = self.lock().get(id).cloned();
        let same_session = slot.as_ref().is_some_and(|slot| {
            slot.lock()
                .as_ref()
                .is_some_and(|c| c.key == key && c.revision == stored)
        });
        if !same_session {
            // Not open, open on another ruleset, or behind: saved as it is, then opened (room made
            // for it before anything is stored).
            self.forget(id);
            self.slot(id)?;
            let new_revision = self
                .store
                .save_noted(id, revision, &to_body(&character)?, note)?;
            return self.with_current(id, |c, events| {
                let changes = diff(&json!({}), &c.sheet);
                push(c, events, id, &changes);
                Ok(json!({ "id": id, "revision": new_revision, "changes": changes.to_json() }))
            });
        }
        self.write(
            id,
            revision,
            note,
            |_| true,
            |session, cid| {
                session
                    .update(cid, &character)
                    .map(|()| Value::Null)
                    .map_err(|e| ApiError::internal(e.to_string()))
            },
        )
    }

    /// applyChanges: `batch` applied to the character as one write against `revision`, atomic (a
    /// failing change leaves everything as it was and is answered with its code and its path under
    /// `/changes/…`). Incoming-change dice take the changes' own `faces`, then `seed`'s dice or the
    /// system's. `{ id, revision, changes, applied }`, `applied` applyChanges' output.
    pub fn apply(
        &self,
        id: &str,
        revision: u64,
        batch: &Value,
        strict: bool,
        seed: Option<u64>,
        author: Option<&str>,
    ) -> Result<Value, ApiError> {
        let count = batch.as_array().map_or(1, Vec::len);
        let note = self.note(
            author,
            format!(
                "applied {count} change{}",
                if count == 1 { "" } else { "s" }
            ),
        );
        let changes = ocf_engine::changes::read_batch(batch).map_err(|e| {
            ApiError::many(
                StatusCode::BAD_REQUEST,
                vec![serde_json::to_value(e).unwrap_or_default()],
            )
        })?;
        // applyChanges judges its own changes (a value out of bounds clamped and `skipped`, or
        // strict refused at `/changes/…`): the sheet's new errors don't refuse the batch.
        self.write(
            id,
            revision,
            &note,
            |_| false,
            |session, cid| {
                let mut dice = dice(seed);
                let options = ocf_engine::ApplyOptions {
                    links: Default::default(),
                    strict,
                    dice: Some(&mut *dice),
                };
                let applied = session.apply(cid, &changes, options).map_err(|e| {
                    ApiError::many(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        vec![serde_json::to_value(e).unwrap_or_default()],
                    )
                })?;
                let mut applied = applied.to_json();
                // The new file is the stored one: the answer does not carry it twice.
                if let Value::Object(map) = &mut applied {
                    map.remove("character");
                }
                Ok(json!({ "applied": applied }))
            },
        )
    }

    /// listOptions for the choice at `path` (`{ entry?, choice: [...] }`) of the stored character:
    /// `{ id, revision, options }`, `options` as `ocf options --json` gives it. Trials are made and
    /// taken back in the session; nothing is stored.
    pub fn list_options(&self, id: &str, path: &Value) -> Result<Value, ApiError> {
        let path = ocf_engine::options::path::ChoicePath::from_json(path).map_err(|e| {
            ApiError::many(
                StatusCode::BAD_REQUEST,
                vec![with_path(e.to_json(), "/path")],
            )
        })?;
        self.read_with(id, |session, cid, revision| {
            let listed = session.list_options(cid, &path).map_err(|e| {
                ApiError::many(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    vec![with_path(e.to_json(), "/path")],
                )
            })?;
            Ok(json!({ "id": id, "revision": revision, "options": listed.to_json() }))
        })
    }

    /// startAction on the stored character: `{ id, revision, result }`, `result` finished (with
    /// its proposed changes) or paused (with `needs` and a `state` that any instance can continue).
    /// Faces the policy lets the engine roll come from `seed` when given, else the system's
    /// randomness; the state keeps them, so a continue never rolls them again.
    pub fn start_action(
        &self,
        id: &str,
        input: ocf_actions::StartInput,
        seed: Option<u64>,
    ) -> Result<Value, ApiError> {
        self.run_action(id, seed, None, |db, c, _, dice| {
            ocf_actions::start_action(db, c, &input, dice, ocf_actions::Limits::default())
        })
    }

    /// continueAction: the paused action of `state` (as the service signed it) continued with
    /// `answer`. A state that is not the service's as it handed it out is `invalid-state`, another
    /// character's `foreign-state`, one made before the character's last change `stale-state`.
    pub fn continue_action(
        &self,
        id: &str,
        state: &Value,
        answer: ocf_actions::Answer,
        seed: Option<u64>,
    ) -> Result<Value, ApiError> {
        self.run_action(id, seed, Some(state), move |db, c, state, dice| {
            let input = ocf_actions::ContinueInput {
                state: serde_json::from_value(state)
                    .map_err(|e| ocf_actions::ActionError::new("invalid-state", e.to_string()))?,
                answer,
            };
            ocf_actions::continue_action(db, c, &input, dice, ocf_actions::Limits::default())
        })
    }

    /// Runs an action call on the open, current character with the dice of `seed`, on the
    /// engine's state inside `signed` (checked against the character and its revision) for a
    /// continue; a paused result's state is handed out signed.
    fn run_action(
        &self,
        id: &str,
        seed: Option<u64>,
        signed: Option<&Value>,
        call: impl FnOnce(
            &ocf_engine::Database,
            ocf_engine::CharacterInput,
            Value,
            &mut dyn ocf_dice::DiceFunction,
        ) -> Result<Value, ocf_actions::ActionError>,
    ) -> Result<Value, ApiError> {
        let signer = self.signer()?.clone();
        self.read_with(id, |session, cid, revision| {
            let state = match signed {
                Some(signed) => signer.open(signed, id, revision)?,
                None => Value::Null,
            };
            let c = session
                .character_input(cid)
                .ok_or_else(|| ApiError::internal("the character is not open"))?;
            let mut dice = dice(seed);
            let result = call(
                session
                    .db(cid)
                    .map_err(|_| ApiError::internal("the character is not open"))?,
                c,
                state,
                &mut *dice,
            )
            .map_err(action_error);
            // A proposed sheet's inputs stay in the character's database: given back once they
            // outgrow it, so a long session's memory follows what is open (issue 19).
            let _ = session.reclaim(cid);
            let mut result = result?;
            if let Some(state) = result.get_mut("state") {
                *state = json!(signer.sign(id, revision, state));
            }
            Ok(json!({ "id": id, "revision": revision, "result": result }))
        })
    }

    /// Runs `read` on the open, current character `id` (its session, its ID there and revision).
    pub(crate) fn read_with(
        &self,
        id: &str,
        read: impl FnOnce(&mut Session, CharacterId, u64) -> Result<Value, ApiError>,
    ) -> Result<Value, ApiError> {
        self.with_current(id, |c, _| read(&mut c.session, c.id, c.revision))
    }

    /// What a write by `author` keeps in the history.
    fn note(&self, author: Option<&str>, what: String) -> Note {
        Note {
            author: author.map(str::to_owned),
            what,
            keep: self.limits.history,
        }
    }

    /// The character's kept revisions, newest first: `{ id, revision, history: [{ revision,
    /// author, what, at }] }`, `at` in seconds since the Unix epoch.
    pub fn history(&self, id: &str) -> Result<Value, ApiError> {
        let current = self
            .store
            .revision(id)?
            .ok_or_else(|| ApiError::not_found("character", id))?;
        let history: Vec<Value> = self
            .store
            .history(id)?
            .into_iter()
            .map(|r| {
                json!({ "revision": r.revision, "author": r.author, "what": r.what, "at": r.at })
            })
            .collect();
        Ok(json!({ "id": id, "revision": current, "history": history }))
    }

    /// `{ id, revision, current, character }`: the file as it was at a kept `revision`
    /// (`unknown-revision` 404 for one never made or no longer kept).
    pub fn revision_file(&self, id: &str, revision: u64) -> Result<Value, ApiError> {
        let current = self
            .store
            .revision(id)?
            .ok_or_else(|| ApiError::not_found("character", id))?;
        let stored = self.kept(id, revision)?;
        let file: Value = serde_json::from_str(&stored.body)
            .map_err(|e| ApiError::internal(format!("the stored revision does not read: {e}")))?;
        Ok(json!({ "id": id, "revision": revision, "current": current, "character": file }))
    }

    fn kept(&self, id: &str, revision: u64) -> Result<crate::store::Stored, ApiError> {
        self.store.load_revision(id, revision)?.ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "unknown-revision",
                format!("`{id}` keeps no revision {revision}"),
                "",
            )
            .with("revision", revision)
        })
    }

    /// Makes the file of the kept revision `to` the character's file again, as a new write made
    /// against `revision` (nothing of the history is lost): `{ id, revision, changes }`.
    pub fn revert(
        &self,
        id: &str,
        revision: u64,
        to: u64,
        author: Option<&str>,
    ) -> Result<Value, ApiError> {
        let stored = self.kept(id, to)?;
        let character = from_body(&stored.body)?;
        let note = self.note(author, format!("reverted to revision {to}"));
        self.replace_noted(id, revision, character, &note)
    }

    /// Undoes the last write, made against `revision` (the current one): the file of the revision
    /// before it, as a new write. `nothing-to-undo` (409) at the first revision.
    pub fn undo(&self, id: &str, revision: u64, author: Option<&str>) -> Result<Value, ApiError> {
        if revision <= 1 {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "nothing-to-undo",
                format!("revision {revision} of `{id}` is its first"),
                "/revision",
            ));
        }
        let stored = self.kept(id, revision - 1)?;
        let character = from_body(&stored.body)?;
        let note = self.note(author, format!("undid revision {revision}"));
        self.replace_noted(id, revision, character, &note)
    }

    /// Closes an open character (it stays stored); a character not open is left as it is.
    pub fn close(&self, id: &str) -> Result<Value, ApiError> {
        if self.store.revision(id)?.is_none() && !self.lock().contains_key(id) {
            return Err(ApiError::not_found("character", id));
        }
        let closed = self.forget(id);
        Ok(json!({ "id": id, "closed": closed }))
    }

    /// A stream of the character's changes, and the sheet it starts from (`{ id, revision, sheet }`).
    pub fn subscribe(&self, id: &str) -> Result<(Value, broadcast::Receiver<Event>), ApiError> {
        self.with_current(id, |c, events| {
            Ok((sheet_answer(c, id), events.subscribe()))
        })
    }

    /// The open characters that have subscribers.
    fn watched(&self) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|(_, s)| s.events.receiver_count() > 0)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Brings every open character that has subscribers to its stored revision (another instance
    /// may have written it), pushing what changed: each under its own lock, one after another.
    pub fn refresh_watched(&self) {
        for id in self.watched() {
            self.refresh(&id);
        }
    }

    /// Pushes `event` (an ask between pages, `asks.rs`) to `id`'s subscribers; false when no page
    /// is open on it.
    pub fn tell(&self, id: &str, event: Value) -> bool {
        let slot = self.lock().get(id).cloned();
        slot.is_some_and(|s| {
            s.events.receiver_count() > 0 && s.events.send(Arc::new(event)).is_ok()
        })
    }

    /// Whether `id` is open with subscribers.
    pub fn watches(&self, id: &str) -> bool {
        self.lock()
            .get(id)
            .is_some_and(|s| s.events.receiver_count() > 0)
    }

    /// Brings `id` to its stored revision if it is open and watched (another instance wrote it),
    /// pushing what changed.
    pub fn refresh(&self, id: &str) {
        if self.watches(id)
            && let Err(error) = self.with_current(id, |_, _| Ok(()))
        {
            tracing::warn!(character = %id, errors = ?error.errors, "refreshing a watched character");
        }
    }

    /// The ruleset the stored character `id` computes on, whose texts and hints `texts.rs` serves.
    pub fn ruleset_of(&self, id: &str) -> Result<Arc<ocf_model::Ruleset>, ApiError> {
        let stored = self
            .store
            .load(id)?
            .ok_or_else(|| ApiError::not_found("character", id))?;
        let character = from_body(&stored.body)?;
        self.rulesets
            .ruleset_for(&character)
            .map(|(_, ruleset)| ruleset)
            .map_err(|errors| ApiError::many(StatusCode::UNPROCESSABLE_ENTITY, errors))
    }

    /// Opens the stored character `id` in a session of its own on its ruleset.
    fn open_character(&self, id: &str) -> Result<OpenCharacter, ApiError> {
        let stored = self
            .store
            .load(id)?
            .ok_or_else(|| ApiError::not_found("character", id))?;
        let character = from_body(&stored.body)?;
        let (key, ruleset) = self
            .rulesets
            .ruleset_for(&character)
            .map_err(|errors| ApiError::many(StatusCode::UNPROCESSABLE_ENTITY, errors))?;
        // A file stored before the limits (or by another program) costs no more to open than a
        // sent one may.
        self.check_cost(&character, &ruleset)?;
        let mut session = Session::shared(ruleset.clone());
        let cid = session.open(&character, &[]);
        // The first report is the sheet whole: the one later reports are made against.
        let mut sheet = Value::Null;
        told(&sheet, &session_changes(&mut session, cid)?).apply_to(&mut sheet);
        Ok(OpenCharacter {
            key,
            session,
            id: cid,
            revision: stored.revision,
            sheet,
        })
    }

    /// The open character `c` at its stored revision: as it is when the store holds that
    /// revision, else brought to the stored file, its subscribers told what changed.
    fn reload(
        &self,
        id: &str,
        mut c: OpenCharacter,
        events: &broadcast::Sender<Event>,
    ) -> Result<OpenCharacter, ApiError> {
        match self.store.revision(id)? {
            None => return Err(ApiError::not_found("character", id)),
            Some(stored) if stored == c.revision => return Ok(c),
            Some(_) => {}
        }
        let Some(stored) = self.store.load(id)? else {
            return Err(ApiError::not_found("character", id));
        };
        let character = from_body(&stored.body)?;
        // The stored file may pin other packs now (or packs the service no longer has): it is
        // opened afresh on its own ruleset, or refused as an open would be.
        let (key, _) = self
            .rulesets
            .ruleset_for(&character)
            .map_err(|errors| ApiError::many(StatusCode::UNPROCESSABLE_ENTITY, errors))?;
        if c.key != key {
            let fresh = self.open_character(id)?;
            let changes = diff(&c.sheet, &fresh.sheet);
            push(&fresh, events, id, &changes);
            return Ok(fresh);
        }
        c.session
            .update(c.id, &character)
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let told = told(&c.sheet, &session_changes(&mut c.session, c.id)?);
        c.revision = stored.revision;
        push(&c, events, id, &told.changes);
        told.apply_to(&mut c.sheet);
        Ok(c)
    }

    /// One write: `edit` applied to the open character at `revision`, refused with the sheet's
    /// errors it makes at `/values/…`, saved over `revision`, pushed to subscribers. Only the
    /// character's own lock is held.
    fn write(
        &self,
        id: &str,
        revision: u64,
        note: &Note,
        refuses: impl Fn(&Value) -> bool,
        edit: impl FnOnce(&mut Session, CharacterId) -> Result<Value, ApiError>,
    ) -> Result<Value, ApiError> {
        self.with_current(id, |c, events| {
            if c.revision != revision {
                return Err(ApiError::conflict(id, revision, c.revision));
            }
            let session = &mut c.session;
            let before = session
                .file(c.id)
                .map_err(|e| ApiError::internal(e.to_string()))?
                .clone();
            let extra = match edit(session, c.id) {
                Ok(extra) => extra,
                Err(error) => {
                    undo(session, c.id, &before);
                    return Err(error);
                }
            };
            // What the edit changed, as the engine tells it (its cost follows what changed).
            let told = match session_changes(session, c.id) {
                Ok(changed) => told(&c.sheet, &changed),
                Err(error) => {
                    undo(session, c.id, &before);
                    return Err(error);
                }
            };
            let made = refused(
                new_value_errors(&c.sheet, &told.changes)
                    .into_iter()
                    .filter(|e| refuses(e))
                    .collect(),
            );
            if !made.is_empty() {
                undo(session, c.id, &before);
                return Err(ApiError::many(StatusCode::UNPROCESSABLE_ENTITY, made));
            }
            let body = match session.file(c.id) {
                Ok(file) => to_body(file)?,
                Err(e) => {
                    undo(session, c.id, &before);
                    return Err(ApiError::internal(e.to_string()));
                }
            };
            match self.store.save_noted(id, revision, &body, note) {
                Ok(new_revision) => {
                    c.revision = new_revision;
                    push(c, events, id, &told.changes);
                    let mut answer = json!({
                        "id": id, "revision": new_revision, "changes": told.changes.to_json()
                    });
                    told.apply_to(&mut c.sheet);
                    if let (Value::Object(answer), Value::Object(extra)) = (&mut answer, extra) {
                        answer.extend(extra);
                    }
                    Ok(answer)
                }
                Err(error) => {
                    // Another instance wrote first: the edit is not made anywhere.
                    undo(session, c.id, &before);
                    Err(error.into())
                }
            }
        })
    }
}

/// `{ id, revision, sheet, inputs }` of an open character: `inputs` maps each input field of the
/// sheet to `{ type, values? }`, what an editor needs to offer an edit box (or a list for an enum).
fn sheet_answer(c: &OpenCharacter, id: &str) -> Value {
    let ruleset = c.session.ruleset();
    let mut inputs = serde_json::Map::new();
    if let Some(values) = c.sheet.get("values").and_then(Value::as_object) {
        for field in values.keys() {
            if let Some(decl) = ruleset.field(field)
                && decl.decl.input == Some(true)
            {
                let mut input = json!({ "type": decl.decl.r#type });
                if !decl.decl.values.is_empty() {
                    input["values"] = json!(decl.decl.values);
                }
                inputs.insert(field.clone(), input);
            }
        }
    }
    json!({ "id": id, "revision": c.revision, "sheet": c.sheet, "inputs": inputs })
}

/// An engine error object with its `path` given under the request's `at` (`/path`).
fn with_path(mut error: Value, at: &str) -> Value {
    if let Value::Object(map) = &mut error {
        let inner = map
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let inner = if inner.starts_with('/') {
            inner
        } else {
            String::new()
        };
        map.insert("path".into(), json!(format!("{at}{inner}")));
    }
    error
}

/// An action's error, answered 422: the request was read, the action refused it.
fn action_error(error: ocf_actions::ActionError) -> ApiError {
    let mut json = error.to_json();
    if let Value::Object(map) = &mut json {
        map.entry("path").or_insert_with(|| json!(""));
    }
    ApiError::many(StatusCode::UNPROCESSABLE_ENTITY, vec![json])
}

/// The dice the engine rolls with where the policy lets it: seeded for a reproducible run.
fn dice(seed: Option<u64>) -> Box<dyn ocf_dice::DiceFunction> {
    match seed {
        Some(seed) => Box::new(ocf_dice::SeededDice::new(seed)),
        None => Box::new(ocf_dice::OsDice::new()),
    }
}

/// Takes an edit back: the file as it was, and the session's report of what changed brought
/// back to the sheet last sent (so the next write is told against it).
fn undo(session: &mut Session, id: CharacterId, before: &Character) {
    if let Err(error) = session.update(id, before) {
        tracing::error!(%error, "taking an edit back");
    }
    if let Err(error) = session.changes(id) {
        tracing::error!(%error, "taking an edit back");
    }
}

fn push(c: &OpenCharacter, events: &broadcast::Sender<Event>, id: &str, changes: &Changes) {
    // Nobody watching: no event is made.
    if changes.is_empty() || events.receiver_count() == 0 {
        return;
    }
    let mut event = changes.to_json();
    if let Value::Object(map) = &mut event {
        map.insert("kind".into(), json!("changed"));
        map.insert("id".into(), json!(id));
        map.insert("revision".into(), json!(c.revision));
    }
    // A subscriber gone since is not an error.
    let _ = events.send(Arc::new(event));
}

/// What changed on the sheet since the session last reported it.
fn session_changes(
    session: &mut Session,
    id: CharacterId,
) -> Result<ocf_engine::SheetChanges, ApiError> {
    session
        .changes(id)
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// The sheet errors at `/values/…` that the sheet after `changes` has and `before` had not: what
/// an edit of a saved value made wrong (none when the errors did not change).
fn new_value_errors(before: &Value, changes: &Changes) -> Vec<Value> {
    let Some(after) = changes.parts.get("errors") else {
        return Vec::new();
    };
    let errors = |errors: Option<&Value>| -> Vec<Value> {
        errors
            .and_then(Value::as_array)
            .map(|errors| {
                errors
                    .iter()
                    .filter(|e| {
                        e.get("path")
                            .and_then(Value::as_str)
                            .is_some_and(|p| p.starts_with("/values/"))
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    let old = errors(before.get("errors"));
    errors(Some(after))
        .into_iter()
        .filter(|e| !old.contains(e))
        .collect()
}

/// A refused edit's errors, told as what happened: the engine's messages describe a file that is
/// read anyway (its value "is ignored", "its default is used"), but the edit is not made.
fn refused(errors: Vec<Value>) -> Vec<Value> {
    errors
        .into_iter()
        .map(|mut error| {
            if let Some(Value::String(message)) = error.get_mut("message") {
                for said in ["; its default is used", "; its saved value is ignored"] {
                    if let Some(at) = message.find(said) {
                        message.truncate(at);
                    }
                }
                message.push_str("; the edit is refused and nothing changed");
            }
            error
        })
        .collect()
}

/// The process's resident memory (`VmRSS` of `/proc/self/status`), where the system tells it.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A character not to be told from another by eye: invisible formatting characters (Unicode's
/// `Cf` category: soft hyphen, zero-width characters, bidirectional controls, word joiners, the
/// byte-order mark, tags).
fn invisible(c: char) -> bool {
    matches!(c as u32,
        0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
        | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFFB | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF
        | 0x0600..=0x0605 | 0x06DD | 0x070F | 0x08E2 | 0x110BD | 0x110CD)
}

/// `forbidden` (403): the route is not the caller's to use.
pub fn forbidden(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, "forbidden", message, "")
}

/// Whether a sheet error is about the input field `field` (as the request names it: qualified or
/// bare): its `data.field`, else the saved value its path names.
fn about_field(error: &Value, field: &str) -> bool {
    let names =
        |id: &str| id == field || id.rsplit_once(':').is_some_and(|(_, bare)| bare == field);
    match error["data"]["field"].as_str() {
        Some(id) => names(id),
        None => error["path"]
            .as_str()
            .and_then(|p| p.strip_prefix("/values/"))
            .is_none_or(names),
    }
}

fn to_body(character: &Character) -> Result<String, ApiError> {
    serde_json::to_string(character).map_err(|e| ApiError::internal(e.to_string()))
}

fn from_body(body: &str) -> Result<Character, ApiError> {
    serde_json::from_str(body)
        .map_err(|e| ApiError::internal(format!("the stored character does not read: {e}")))
}

/// A character sent in a request, as an object or as the text of a file (YAML or JSON), read as
/// `ocf check` reads a file: within the build's limits, a refusal with its code, pointer, line and
/// column.
pub fn read_character(value: &Value, path: &str) -> Result<Character, ApiError> {
    use ocf_load::build::ReadLimits;
    use ocf_load::character::{Format, read_character as read};
    let (text, format) = match value {
        Value::String(text) => (text.clone(), Format::Yaml),
        Value::Object(_) => (value.to_string(), Format::Json),
        _ => {
            return Err(ApiError::bad_request(
                "wrong-type",
                "a character is an object, or the text of its file",
                path,
            ));
        }
    };
    read(
        text.into_bytes(),
        "character",
        format,
        &ReadLimits::default(),
    )
    .map(|file| file.character)
    .map_err(|problem| {
        let mut error = serde_json::to_value(&*problem).unwrap_or_default();
        if let Value::Object(map) = &mut error {
            let pointer = map
                .remove("pointer")
                .and_then(|p| p.as_str().map(str::to_owned))
                .unwrap_or_default();
            map.insert("path".into(), json!(format!("{path}{pointer}")));
            map.remove("file");
        }
        ApiError::many(StatusCode::UNPROCESSABLE_ENTITY, vec![error])
    })
}
