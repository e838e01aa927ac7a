//! Where characters are kept, so a restart loses nothing: each character's file (JSON) under its ID,
//! with a revision that every write must name. A write made against an older revision is refused
//! (`conflict`), never applied on top of another: two tabs, or two service instances behind a load
//! balancer, cannot overwrite each other's edits unseen.

mod postgres;
mod sqlite;

pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;

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

/// A character store. Revisions start at 1 and grow by one per write.
pub trait Store: Send + Sync {
    /// The stored character `id`, if any.
    fn load(&self, id: &str) -> Result<Option<Stored>, StoreError>;
    /// Only the revision of `id` (a cheap check that an open copy is current).
    fn revision(&self, id: &str) -> Result<Option<u64>, StoreError>;
    /// Stores a new character at revision 1; `Exists` when the ID is taken.
    fn create(&self, id: &str, body: &str) -> Result<u64, StoreError>;
    /// Writes `body` over revision `expected`, giving the new revision; `Conflict` when the stored
    /// revision is another (nothing written).
    fn save(&self, id: &str, expected: u64, body: &str) -> Result<u64, StoreError>;
    /// Every stored ID with its revision, by ID.
    fn list(&self) -> Result<Vec<(String, u64)>, StoreError>;
}

/// Opens the store a `--store` URL names: `sqlite:PATH` (the default is `sqlite:ocf.sqlite3`), or
/// `postgres://…` / `postgresql://…`.
pub fn open(url: &str) -> Result<Box<dyn Store>, StoreError> {
    if let Some(path) = url.strip_prefix("sqlite:") {
        return Ok(Box::new(SqliteStore::open(path)?));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok(Box::new(PostgresStore::open(url)?));
    }
    Err(StoreError::Backend(format!(
        "unknown store `{url}`: give `sqlite:PATH` or `postgres://…`"
    )))
}
