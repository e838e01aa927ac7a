//! Where characters are kept, so a restart loses nothing: each character's file (JSON) under its ID,
//! with a revision that every write must name. A write made against an older revision is refused
//! (`conflict`), never applied on top of another: two tabs, or two service instances behind a load
//! balancer, cannot overwrite each other's edits unseen.

mod postgres;
mod sqlite;

pub use postgres::PostgresStore;
pub use sqlite::{Durability, SqliteStore};

/// A stored character.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    pub revision: u64,
    /// The character file, as JSON text.
    pub body: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StoreError {
    /// The write named `given`, the store holds `current`.
    Conflict {
        id: String,
        given: u64,
        current: u64,
    },
    /// A create of an ID that is stored already.
    Exists(String),
    /// The backend failed (disk, connection): nothing was written.
    Backend(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Conflict { id, given, current } => {
                write!(f, "`{id}` is at revision {current}, not {given}")
            }
            StoreError::Exists(id) => write!(f, "`{id}` is stored already"),
            StoreError::Backend(message) => f.write_str(message),
        }
    }
}

/// Who made a write and what it was, kept with the revision it makes in the character's history,
/// and how much of that history to keep.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Note {
    /// The user's name; `None` for the open service (no accounts) or the service itself.
    pub author: Option<String>,
    /// What the write did, in words (`set hp.current to 7`).
    pub what: String,
    pub keep: Keep,
}

/// How much of a character's history a write leaves: the newest `count` revisions, none older
/// than `max_age` seconds (the current revision always).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    pub count: u64,
    pub max_age: Option<i64>,
}

impl Default for Keep {
    fn default() -> Keep {
        Keep {
            count: 100,
            max_age: None,
        }
    }
}

impl Keep {
    /// The oldest time (seconds since the epoch) a kept revision may have at `now`.
    pub fn oldest(&self, now: i64) -> i64 {
        self.max_age.map_or(i64::MIN, |age| now.saturating_sub(age))
    }
}

/// A revision in a character's history: who made it, what it did, when (seconds since the epoch).
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    pub revision: u64,
    pub author: Option<String>,
    pub what: String,
    pub at: i64,
}

/// A stored character as listed: its ID, revision and who may see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub id: String,
    pub revision: u64,
    pub ownership: Ownership,
}

/// Who a character belongs to: its owner (a user's name; none for a character only the
/// gamemaster edits) and whether the gamemaster shares it with every player and observer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ownership {
    pub owner: Option<String>,
    pub shared: bool,
}

/// A user: a name, a role (`gamemaster`, `player`, `observer`) and the PHC string of the
/// password's Argon2id hash (empty for a user who logs in only by token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub role: String,
    pub hash: String,
}

/// A credential: an app's bearer token (`kind` `token`) or a browser's session (`session`), kept
/// as the SHA-256 of its secret (`digest`, hex), never the secret itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credential {
    pub digest: String,
    pub user: String,
    pub kind: String,
    /// What names it in lists and revocations (a token's first characters); empty for a session.
    pub label: String,
    /// When it stops being accepted (seconds since the Unix epoch); never when `None`.
    pub expires: Option<i64>,
}

/// What a store tells of other instances' writes ([`Store::listen`]): a character's ID, or `None`
/// for "catch up on everything"; it answers whether it still wants to hear.
pub type Changed = Box<dyn FnMut(Option<&str>) -> bool + Send>;

/// A character store, with the accounts that reach it. Revisions start at 1 and grow by one per
/// write.
pub trait Store: Send + Sync {
    /// The stored character `id`, if any.
    fn load(&self, id: &str) -> Result<Option<Stored>, StoreError>;
    /// Only the revision of `id` (a cheap check that an open copy is current).
    fn revision(&self, id: &str) -> Result<Option<u64>, StoreError>;
    /// Stores a new character at revision 1, owned by `owner`, `note` its history's first entry;
    /// `Exists` when the ID is taken.
    fn create_noted(
        &self,
        id: &str,
        body: &str,
        owner: Option<&str>,
        note: &Note,
    ) -> Result<u64, StoreError>;
    /// Writes `body` over revision `expected`, giving the new revision, kept in the character's
    /// history with `note` (older revisions past `note.keep` dropped); `Conflict` when the stored
    /// revision is another (nothing written).
    fn save_noted(
        &self,
        id: &str,
        expected: u64,
        body: &str,
        note: &Note,
    ) -> Result<u64, StoreError>;
    /// [`Store::create_noted`] with no author.
    fn create(&self, id: &str, body: &str, owner: Option<&str>) -> Result<u64, StoreError> {
        let note = Note {
            what: "created".into(),
            ..Note::default()
        };
        self.create_noted(id, body, owner, &note)
    }
    /// [`Store::save_noted`] with no author.
    fn save(&self, id: &str, expected: u64, body: &str) -> Result<u64, StoreError> {
        let note = Note {
            what: "saved".into(),
            ..Note::default()
        };
        self.save_noted(id, expected, body, &note)
    }
    /// The revisions kept of `id`, newest first (empty when none is, or there is no such
    /// character).
    fn history(&self, id: &str) -> Result<Vec<Revision>, StoreError>;
    /// The file of `id` at `revision`, if that revision is kept.
    fn load_revision(&self, id: &str, revision: u64) -> Result<Option<Stored>, StoreError>;
    /// Every stored character, by ID.
    fn list(&self) -> Result<Vec<Listed>, StoreError>;
    /// Removes the character and its history; `false` when there was none.
    fn delete(&self, id: &str) -> Result<bool, StoreError>;
    /// Who the character belongs to, if it is stored.
    fn ownership(&self, id: &str) -> Result<Option<Ownership>, StoreError>;
    /// Gives the character to `ownership`; `false` when there is no such character.
    fn set_ownership(&self, id: &str, ownership: &Ownership) -> Result<bool, StoreError>;
    /// Every user, by name.
    fn accounts(&self) -> Result<Vec<Account>, StoreError>;
    fn account(&self, name: &str) -> Result<Option<Account>, StoreError>;
    /// Adds the user, or replaces its role and hash.
    fn put_account(&self, account: &Account) -> Result<(), StoreError>;
    /// Removes the user and its tokens and sessions; `false` when there was none.
    fn remove_account(&self, name: &str) -> Result<bool, StoreError>;
    /// Keeps a credential (and forgets the expired ones).
    fn add_credential(&self, credential: &Credential) -> Result<(), StoreError>;
    /// The credential of `digest`, unless it expired by `now`.
    fn credential(&self, digest: &str, now: i64) -> Result<Option<Credential>, StoreError>;
    /// Every credential of `kind`.
    fn credentials(&self, kind: &str) -> Result<Vec<Credential>, StoreError>;
    /// Removes the credentials of `kind` whose digest or label is `key`; how many there were.
    fn remove_credential(&self, kind: &str, key: &str) -> Result<usize, StoreError>;
    /// The stored setting `name`, storing `fresh` first when there is none: what every instance
    /// over the store shares (the key that signs paused actions' states).
    fn setting(&self, name: &str, fresh: &str) -> Result<String, StoreError>;
    /// Tells `changed` the ID of each character any instance over the store writes or deletes,
    /// as the write commits, from a thread of its own, for as long as `changed` returns `true`;
    /// `None` now and then, and after a lost connection, meaning "catch up on everything".
    /// `false` when the store can't tell (the service then checks every second).
    fn listen(&self, changed: Changed) -> Result<bool, StoreError> {
        let _ = changed;
        Ok(false)
    }
}

/// Opens the store a `--store` URL names: `sqlite:PATH` (the default is `sqlite:ocf.sqlite3`;
/// `?synchronous=normal`, `?group=off` change its [`Durability`]), or `postgres://…` /
/// `postgresql://…`.
pub fn open(url: &str) -> Result<Box<dyn Store>, StoreError> {
    if let Some(path) = url.strip_prefix("sqlite:") {
        let (path, durability) = match path.split_once('?') {
            Some((path, query)) => (path, Durability::parse(query)?),
            None => (path, Durability::default()),
        };
        return Ok(Box::new(SqliteStore::open_with(path, durability)?));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok(Box::new(PostgresStore::open(url)?));
    }
    Err(StoreError::Backend(format!(
        "unknown store `{url}`: give `sqlite:PATH` or `postgres://…`"
    )))
}

/// Seconds since the Unix epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}
