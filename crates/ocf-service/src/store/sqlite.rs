//! The embedded store: one SQLite file (bundled, so a fresh machine needs nothing), one table.
//! A write is one `UPDATE … WHERE revision = ?`: the check and the write are a single statement, so
//! two writers racing on one revision cannot both win.

use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

use super::{Account, Credential, Listed, Ownership, Store, StoreError, Stored, now};

pub struct SqliteStore {
    /// The one connection that writes (SQLite takes one writer at a time anyway).
    connection: Mutex<Connection>,
    /// Connections that only read: under WAL a read goes on while a write commits, so a read of
    /// one character never waits for another's write to reach the disk. None for a database in
    /// memory (each connection would have its own), which then reads on `connection`.
    readers: Vec<Mutex<Connection>>,
}

/// Read connections of a store on a file.
const READERS: usize = 4;

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
                );
                CREATE TABLE IF NOT EXISTS accounts (
                    name TEXT PRIMARY KEY NOT NULL,
                    role TEXT NOT NULL,
                    hash TEXT NOT NULL
                );
                CREATE TABLE IF NOT EXISTS credentials (
                    digest TEXT PRIMARY KEY NOT NULL,
                    user TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    label TEXT NOT NULL,
                    expires INTEGER
                );
                CREATE TABLE IF NOT EXISTS settings (
                    name TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                );",
            )
            .map_err(backend)?;
        // A store made before accounts existed gains the ownership columns (SQLite has no
        // `ADD COLUMN IF NOT EXISTS`: a column already there is the one error let through).
        for column in ["owner TEXT", "shared INTEGER NOT NULL DEFAULT 0"] {
            match connection.execute(&format!("ALTER TABLE characters ADD COLUMN {column}"), []) {
                Ok(_) => {}
                Err(e) if e.to_string().contains("duplicate column") => {}
                Err(e) => return Err(backend(e)),
            }
        }
        let mut readers = Vec::new();
        if !path.is_empty() && path != ":memory:" && !path.contains("mode=memory") {
            for _ in 0..READERS {
                let reader = Connection::open(path).map_err(backend)?;
                reader
                    .busy_timeout(std::time::Duration::from_secs(5))
                    .map_err(backend)?;
                reader
                    .pragma_update(None, "query_only", true)
                    .map_err(backend)?;
                readers.push(Mutex::new(reader));
            }
        }
        Ok(SqliteStore {
            connection: Mutex::new(connection),
            readers,
        })
    }

    fn connection(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave a half-written row (SQLite's statements are
        // atomic), so the connection is still good.
        self.connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A connection to read on: a free reader, else the next one to come free.
    fn reader(&self) -> std::sync::MutexGuard<'_, Connection> {
        for reader in &self.readers {
            if let Ok(reader) = reader.try_lock() {
                return reader;
            }
        }
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        match self.readers.len() {
            0 => self.connection(),
            n => self.readers[NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % n]
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        }
    }
}

impl Store for SqliteStore {
    fn load(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        self.reader()
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
        self.reader()
            .query_row(
                "SELECT revision FROM characters WHERE id = ?1",
                params![id],
                |row| row.get::<_, i64>(0),
            )
            .optional()
            .map(|r| r.map(|r| r as u64))
            .map_err(backend)
    }

    fn create(&self, id: &str, body: &str, owner: Option<&str>) -> Result<u64, StoreError> {
        let inserted = self
            .connection()
            .execute(
                "INSERT INTO characters (id, revision, body, owner) VALUES (?1, 1, ?2, ?3)
                 ON CONFLICT (id) DO NOTHING",
                params![id, body, owner],
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

    fn list(&self) -> Result<Vec<Listed>, StoreError> {
        let connection = self.reader();
        let mut statement = connection
            .prepare("SELECT id, revision, owner, shared FROM characters ORDER BY id")
            .map_err(backend)?;
        let rows = statement
            .query_map([], |row| {
                Ok(Listed {
                    id: row.get(0)?,
                    revision: row.get::<_, i64>(1)? as u64,
                    ownership: Ownership {
                        owner: row.get(2)?,
                        shared: row.get::<_, i64>(3)? != 0,
                    },
                })
            })
            .map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)
    }

    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        self.connection()
            .execute("DELETE FROM characters WHERE id = ?1", params![id])
            .map(|n| n > 0)
            .map_err(backend)
    }

    fn ownership(&self, id: &str) -> Result<Option<Ownership>, StoreError> {
        self.reader()
            .query_row(
                "SELECT owner, shared FROM characters WHERE id = ?1",
                params![id],
                |row| {
                    Ok(Ownership {
                        owner: row.get(0)?,
                        shared: row.get::<_, i64>(1)? != 0,
                    })
                },
            )
            .optional()
            .map_err(backend)
    }

    fn set_ownership(&self, id: &str, ownership: &Ownership) -> Result<bool, StoreError> {
        self.connection()
            .execute(
                "UPDATE characters SET owner = ?1, shared = ?2 WHERE id = ?3",
                params![ownership.owner, ownership.shared as i64, id],
            )
            .map(|n| n > 0)
            .map_err(backend)
    }

    fn accounts(&self) -> Result<Vec<Account>, StoreError> {
        let connection = self.reader();
        let mut statement = connection
            .prepare("SELECT name, role, hash FROM accounts ORDER BY name")
            .map_err(backend)?;
        let rows = statement.query_map([], account).map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)
    }

    fn account(&self, name: &str) -> Result<Option<Account>, StoreError> {
        self.reader()
            .query_row(
                "SELECT name, role, hash FROM accounts WHERE name = ?1",
                params![name],
                account,
            )
            .optional()
            .map_err(backend)
    }

    fn put_account(&self, account: &Account) -> Result<(), StoreError> {
        self.connection()
            .execute(
                "INSERT INTO accounts (name, role, hash) VALUES (?1, ?2, ?3)
                 ON CONFLICT (name) DO UPDATE SET role = excluded.role, hash = excluded.hash",
                params![account.name, account.role, account.hash],
            )
            .map(|_| ())
            .map_err(backend)
    }

    fn remove_account(&self, name: &str) -> Result<bool, StoreError> {
        let mut connection = self.connection();
        let transaction = connection.transaction().map_err(backend)?;
        transaction
            .execute("DELETE FROM credentials WHERE user = ?1", params![name])
            .map_err(backend)?;
        let removed = transaction
            .execute("DELETE FROM accounts WHERE name = ?1", params![name])
            .map_err(backend)?;
        transaction.commit().map_err(backend)?;
        Ok(removed > 0)
    }

    fn add_credential(&self, c: &Credential) -> Result<(), StoreError> {
        let connection = self.connection();
        connection
            .execute(
                "DELETE FROM credentials WHERE expires IS NOT NULL AND expires < ?1",
                params![now()],
            )
            .map_err(backend)?;
        connection
            .execute(
                "INSERT INTO credentials (digest, user, kind, label, expires)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![c.digest, c.user, c.kind, c.label, c.expires],
            )
            .map(|_| ())
            .map_err(backend)
    }

    fn credential(&self, digest: &str, now: i64) -> Result<Option<Credential>, StoreError> {
        self.reader()
            .query_row(
                "SELECT digest, user, kind, label, expires FROM credentials
                 WHERE digest = ?1 AND (expires IS NULL OR expires >= ?2)",
                params![digest, now],
                credential,
            )
            .optional()
            .map_err(backend)
    }

    fn credentials(&self, kind: &str) -> Result<Vec<Credential>, StoreError> {
        let connection = self.reader();
        let mut statement = connection
            .prepare(
                "SELECT digest, user, kind, label, expires FROM credentials
                 WHERE kind = ?1 ORDER BY user, label",
            )
            .map_err(backend)?;
        let rows = statement
            .query_map(params![kind], credential)
            .map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)
    }

    fn remove_credential(&self, kind: &str, key: &str) -> Result<usize, StoreError> {
        self.connection()
            .execute(
                "DELETE FROM credentials WHERE kind = ?1 AND (digest = ?2 OR label = ?2)",
                params![kind, key],
            )
            .map_err(backend)
    }

    fn setting(&self, name: &str, fresh: &str) -> Result<String, StoreError> {
        let connection = self.connection();
        connection
            .execute(
                "INSERT INTO settings (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING",
                params![name, fresh],
            )
            .map_err(backend)?;
        connection
            .query_row(
                "SELECT value FROM settings WHERE name = ?1",
                params![name],
                |row| row.get(0),
            )
            .map_err(backend)
    }
}

fn account(row: &rusqlite::Row<'_>) -> rusqlite::Result<Account> {
    Ok(Account {
        name: row.get(0)?,
        role: row.get(1)?,
        hash: row.get(2)?,
    })
}

fn credential(row: &rusqlite::Row<'_>) -> rusqlite::Result<Credential> {
    Ok(Credential {
        digest: row.get(0)?,
        user: row.get(1)?,
        kind: row.get(2)?,
        label: row.get(3)?,
        expires: row.get(4)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_against_an_old_revision_is_refused_and_changes_nothing() {
        let store = SqliteStore::open(":memory:").unwrap();
        assert_eq!(store.create("pc", "{}", None), Ok(1));
        assert_eq!(
            store.create("pc", "{}", None),
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
        assert_eq!(
            store.list().unwrap(),
            vec![Listed {
                id: "pc".to_owned(),
                revision: 2,
                ownership: Ownership::default()
            }]
        );
        assert_eq!(store.revision("nobody").unwrap(), None);
    }
}
