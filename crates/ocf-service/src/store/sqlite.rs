//! The embedded store: one SQLite file (bundled, so a fresh machine needs nothing), one table.
//! A write is one `UPDATE … WHERE revision = ?`: the check and the write are a single statement, so
//! two writers racing on one revision cannot both win.

use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

use super::{Store, StoreError, Stored};

pub struct SqliteStore {
    connection: Mutex<Connection>,
}

fn backend(error: rusqlite::Error) -> StoreError {
    StoreError::Backend(format!("sqlite: {error}"))
}

impl SqliteStore {
    /// Opens (creating if needed) the database file at `path`; `:memory:` for one in memory.
    pub fn open(path: &str) -> Result<SqliteStore, StoreError> {
        let connection = Connection::open(path).map_err(backend)?;
        // WAL lets readers go on while a write commits; a busy timeout rides out another process
        // holding the lock briefly instead of failing the request.
        connection
            .busy_timeout(std::time::Duration::from_secs(5))
            .map_err(backend)?;
        let _ = connection.pragma_update(None, "journal_mode", "WAL");
        connection
            .execute_batch(
                "CREATE TABLE IF NOT EXISTS characters (
                    id TEXT PRIMARY KEY NOT NULL,
                    revision INTEGER NOT NULL,
                    body TEXT NOT NULL
                )",
            )
            .map_err(backend)?;
        Ok(SqliteStore {
            connection: Mutex::new(connection),
        })
    }

    fn connection(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave a half-written row (SQLite's statements are
        // atomic), so the connection is still good.
        self.connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Store for SqliteStore {
    fn load(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        self.connection()
            .query_row(
                "SELECT revision, body FROM characters WHERE id = ?1",
                params![id],
                |row| {
                    Ok(Stored {
                        revision: row.get::<_, i64>(0)? as u64,
                        body: row.get(1)?,
                    })
                },
            )
            .optional()
            .map_err(backend)
    }

    fn revision(&self, id: &str) -> Result<Option<u64>, StoreError> {
        self.connection()
            .query_row(
                "SELECT revision FROM characters WHERE id = ?1",
                params![id],
                |row| row.get::<_, i64>(0),
            )
            .optional()
            .map(|r| r.map(|r| r as u64))
            .map_err(backend)
    }

    fn create(&self, id: &str, body: &str) -> Result<u64, StoreError> {
        let inserted = self
            .connection()
            .execute(
                "INSERT INTO characters (id, revision, body) VALUES (?1, 1, ?2)
                 ON CONFLICT (id) DO NOTHING",
                params![id, body],
            )
            .map_err(backend)?;
        if inserted == 0 {
            return Err(StoreError::Exists(id.to_owned()));
        }
        Ok(1)
    }

    fn save(&self, id: &str, expected: u64, body: &str) -> Result<u64, StoreError> {
        let connection = self.connection();
        let updated = connection
            .execute(
                "UPDATE characters SET body = ?1, revision = revision + 1
                 WHERE id = ?2 AND revision = ?3",
                params![body, id, expected as i64],
            )
            .map_err(backend)?;
        if updated == 1 {
            return Ok(expected + 1);
        }
        let current = connection
            .query_row(
                "SELECT revision FROM characters WHERE id = ?1",
                params![id],
                |row| row.get::<_, i64>(0),
            )
            .optional()
            .map_err(backend)?;
        Err(StoreError::Conflict {
            id: id.to_owned(),
            given: expected,
            current: current.unwrap_or(0) as u64,
        })
    }

    fn list(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let connection = self.connection();
        let mut statement = connection
            .prepare("SELECT id, revision FROM characters ORDER BY id")
            .map_err(backend)?;
        let rows = statement
            .query_map([], |row| Ok((row.get(0)?, row.get::<_, i64>(1)? as u64)))
            .map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_against_an_old_revision_is_refused_and_changes_nothing() {
        let store = SqliteStore::open(":memory:").unwrap();
        assert_eq!(store.create("pc", "{}"), Ok(1));
        assert_eq!(
            store.create("pc", "{}"),
            Err(StoreError::Exists("pc".into()))
        );
        assert_eq!(store.save("pc", 1, r#"{"a":1}"#), Ok(2));
        assert_eq!(
            store.save("pc", 1, r#"{"b":2}"#),
            Err(StoreError::Conflict {
                id: "pc".into(),
                given: 1,
                current: 2
            })
        );
        let stored = store.load("pc").unwrap().unwrap();
        assert_eq!(stored.revision, 2);
        assert_eq!(stored.body, r#"{"a":1}"#);
        assert_eq!(store.list().unwrap(), vec![("pc".to_owned(), 2)]);
        assert_eq!(store.revision("nobody").unwrap(), None);
    }
}
