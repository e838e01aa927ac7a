//! The embedded store: one SQLite file (bundled, so a fresh machine needs nothing), one table.
//! A write is one `UPDATE … WHERE revision = ?`: the check and the write are a single statement, so
//! two writers racing on one revision cannot both win.
//!
//! Durability (docs/service.md, "Durability"): WAL with `synchronous=FULL` by default, so an
//! acknowledged write survives a power cut as well as a killed process, and saves made at once are
//! committed together (group commit): one transaction and one `fsync` for every save waiting when
//! the writer comes free, each still checked against its own revision.

use std::sync::{Condvar, Mutex};

use rusqlite::{Connection, OptionalExtension, params};

use super::{
    Account, Credential, Listed, Note, Ownership, Revision, Store, StoreError, Stored, now,
};

pub struct SqliteStore {
    /// The one connection that writes (SQLite takes one writer at a time anyway).
    connection: Mutex<Connection>,
    /// Connections that only read: under WAL a read goes on while a write commits, so a read of
    /// one character never waits for another's write to reach the disk. None for a database in
    /// memory (each connection would have its own), which then reads on `connection`.
    readers: Vec<Mutex<Connection>>,
    /// Saves waiting to be committed together, when group commit is on.
    group: Option<Group>,
}

/// How the store makes a write durable: `sqlite:PATH?synchronous=normal&group=off` for others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Durability {
    /// `synchronous=FULL` (the WAL is flushed to the disk at each commit) rather than `NORMAL`
    /// (flushed at checkpoints only: a killed process loses nothing, a power cut may lose the
    /// last commits).
    pub full_sync: bool,
    /// Saves waiting at once committed in one transaction.
    pub group_commit: bool,
}

impl Default for Durability {
    fn default() -> Durability {
        Durability {
            full_sync: true,
            group_commit: true,
        }
    }
}

impl Durability {
    /// Reads the `?synchronous=full|normal&group=on|off` of a store URL's path.
    pub fn parse(query: &str) -> Result<Durability, StoreError> {
        let mut durability = Durability::default();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("synchronous", v)) if v.eq_ignore_ascii_case("full") => {
                    durability.full_sync = true
                }
                Some(("synchronous", v)) if v.eq_ignore_ascii_case("normal") => {
                    durability.full_sync = false
                }
                Some(("group", "on")) => durability.group_commit = true,
                Some(("group", "off")) => durability.group_commit = false,
                _ => {
                    return Err(StoreError::Backend(format!(
                        "unknown SQLite store option `{pair}`: give `synchronous=full|normal` or \
                         `group=on|off`"
                    )));
                }
            }
        }
        Ok(durability)
    }
}

/// A save waiting for its commit.
struct Pending {
    id: String,
    expected: u64,
    body: String,
    note: Note,
}

/// The saves waiting for a commit, and whether one is being committed (by the save that found the
/// writer free: it commits every save queued by then, and the others wait for their answers).
#[derive(Default)]
struct Group {
    queue: Mutex<GroupQueue>,
    answered: Condvar,
}

#[derive(Default)]
struct GroupQueue {
    committing: bool,
    next: u64,
    waiting: Vec<(u64, Pending)>,
    answers: std::collections::HashMap<u64, Result<u64, StoreError>>,
}

/// Read connections of a store on a file.
const READERS: usize = 4;

fn backend(error: rusqlite::Error) -> StoreError {
    StoreError::Backend(format!("sqlite: {error}"))
}

impl SqliteStore {
    /// Opens (creating if needed) the database file at `path`; `:memory:` for one in memory.
    pub fn open(path: &str) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_with(path, Durability::default())
    }

    /// Opens the database file at `path` with `durability`.
    pub fn open_with(path: &str, durability: Durability) -> Result<SqliteStore, StoreError> {
        let connection = Connection::open(path).map_err(backend)?;
        // WAL lets readers go on while a write commits; a busy timeout rides out another process
        // holding the lock briefly instead of failing the request.
        connection
            .busy_timeout(std::time::Duration::from_secs(5))
            .map_err(backend)?;
        let _ = connection.pragma_update(None, "journal_mode", "WAL");
        connection
            .pragma_update(
                None,
                "synchronous",
                if durability.full_sync {
                    "FULL"
                } else {
                    "NORMAL"
                },
            )
            .map_err(backend)?;
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
                );
                CREATE TABLE IF NOT EXISTS revisions (
                    id TEXT NOT NULL,
                    revision INTEGER NOT NULL,
                    body TEXT NOT NULL,
                    author TEXT,
                    what TEXT NOT NULL,
                    at INTEGER NOT NULL,
                    PRIMARY KEY (id, revision)
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
            group: durability.group_commit.then(Group::default),
        })
    }

    /// A save in the next group commit: queued, then either committed by this call (with every
    /// save queued by then) or answered by the call committing.
    fn save_grouped(&self, group: &Group, pending: Pending) -> Result<u64, StoreError> {
        let mut queue = group.queue.lock().unwrap_or_else(|p| p.into_inner());
        let ticket = queue.next;
        queue.next += 1;
        queue.waiting.push((ticket, pending));
        loop {
            if let Some(answer) = queue.answers.remove(&ticket) {
                return answer;
            }
            if !queue.committing {
                queue.committing = true;
                let batch = std::mem::take(&mut queue.waiting);
                drop(queue);
                let answered = self.commit_batch(batch);
                queue = group.queue.lock().unwrap_or_else(|p| p.into_inner());
                queue.committing = false;
                queue.answers.extend(answered);
                group.answered.notify_all();
                continue;
            }
            queue = group
                .answered
                .wait(queue)
                .unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Commits `batch` in one transaction, each save checked against its own revision; if the
    /// transaction itself fails, each save is tried again alone (so one bad save fails alone).
    fn commit_batch(&self, batch: Vec<(u64, Pending)>) -> Vec<(u64, Result<u64, StoreError>)> {
        let mut connection = self.connection();
        let together = (|| {
            let transaction = connection.transaction().map_err(backend)?;
            let answers: Vec<_> = batch
                .iter()
                .map(|(ticket, p)| {
                    let answer = save_on(&transaction, &p.id, p.expected, &p.body, &p.note);
                    (*ticket, answer)
                })
                .collect();
            if answers
                .iter()
                .any(|(_, a)| matches!(a, Err(StoreError::Backend(_))))
            {
                return Err(StoreError::Backend("a save of the group failed".into()));
            }
            transaction.commit().map_err(backend)?;
            Ok(answers)
        })();
        match together {
            Ok(answers) => answers,
            Err(_) => batch
                .into_iter()
                .map(|(ticket, p)| {
                    let answer = save_alone(&mut connection, &p.id, p.expected, &p.body, &p.note);
                    (ticket, answer)
                })
                .collect(),
        }
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
            .prepare_cached("SELECT revision, body FROM characters WHERE id = ?1")
            .and_then(|mut statement| {
                statement
                    .query_row(params![id], |row| {
                        Ok(Stored {
                            revision: row.get::<_, i64>(0)? as u64,
                            body: row.get(1)?,
                        })
                    })
                    .optional()
            })
            .map_err(backend)
    }

    fn revision(&self, id: &str) -> Result<Option<u64>, StoreError> {
        self.reader()
            .prepare_cached("SELECT revision FROM characters WHERE id = ?1")
            .and_then(|mut statement| {
                statement
                    .query_row(params![id], |row| row.get::<_, i64>(0))
                    .optional()
            })
            .map(|r| r.map(|r| r as u64))
            .map_err(backend)
    }

    fn create_noted(
        &self,
        id: &str,
        body: &str,
        owner: Option<&str>,
        note: &Note,
    ) -> Result<u64, StoreError> {
        let mut connection = self.connection();
        let transaction = connection.transaction().map_err(backend)?;
        let inserted = transaction
            .execute(
                "INSERT INTO characters (id, revision, body, owner) VALUES (?1, 1, ?2, ?3)
                 ON CONFLICT (id) DO NOTHING",
                params![id, body, owner],
            )
            .map_err(backend)?;
        if inserted == 0 {
            return Err(StoreError::Exists(id.to_owned()));
        }
        keep(&transaction, id, 1, body, note)?;
        transaction.commit().map_err(backend)?;
        Ok(1)
    }

    fn save_noted(
        &self,
        id: &str,
        expected: u64,
        body: &str,
        note: &Note,
    ) -> Result<u64, StoreError> {
        match &self.group {
            Some(group) => self.save_grouped(
                group,
                Pending {
                    id: id.to_owned(),
                    expected,
                    body: body.to_owned(),
                    note: note.clone(),
                },
            ),
            None => save_alone(&mut self.connection(), id, expected, body, note),
        }
    }

    fn history(&self, id: &str) -> Result<Vec<Revision>, StoreError> {
        let connection = self.reader();
        let mut statement = connection
            .prepare(
                "SELECT revision, author, what, at FROM revisions WHERE id = ?1
                 ORDER BY revision DESC",
            )
            .map_err(backend)?;
        let rows = statement
            .query_map(params![id], |row| {
                Ok(Revision {
                    revision: row.get::<_, i64>(0)? as u64,
                    author: row.get(1)?,
                    what: row.get(2)?,
                    at: row.get(3)?,
                })
            })
            .map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)
    }

    fn load_revision(&self, id: &str, revision: u64) -> Result<Option<Stored>, StoreError> {
        self.reader()
            .query_row(
                "SELECT body FROM revisions WHERE id = ?1 AND revision = ?2",
                params![id, revision as i64],
                |row| {
                    Ok(Stored {
                        revision,
                        body: row.get(0)?,
                    })
                },
            )
            .optional()
            .map_err(backend)
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
        let mut connection = self.connection();
        let transaction = connection.transaction().map_err(backend)?;
        transaction
            .execute("DELETE FROM revisions WHERE id = ?1", params![id])
            .map_err(backend)?;
        let removed = transaction
            .execute("DELETE FROM characters WHERE id = ?1", params![id])
            .map_err(backend)?;
        transaction.commit().map_err(backend)?;
        Ok(removed > 0)
    }

    fn ownership(&self, id: &str) -> Result<Option<Ownership>, StoreError> {
        self.reader()
            .prepare_cached("SELECT owner, shared FROM characters WHERE id = ?1")
            .and_then(|mut statement| {
                statement
                    .query_row(params![id], |row| {
                        Ok(Ownership {
                            owner: row.get(0)?,
                            shared: row.get::<_, i64>(1)? != 0,
                        })
                    })
                    .optional()
            })
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

/// One save in a transaction of its own.
fn save_alone(
    connection: &mut Connection,
    id: &str,
    expected: u64,
    body: &str,
    note: &Note,
) -> Result<u64, StoreError> {
    let transaction = connection.transaction().map_err(backend)?;
    let saved = save_on(&transaction, id, expected, body, note)?;
    transaction.commit().map_err(backend)?;
    Ok(saved)
}

/// One save inside the caller's transaction: the new revision (kept in the history, with what
/// `note.keep` no longer keeps dropped), or `Conflict`.
fn save_on(
    connection: &Connection,
    id: &str,
    expected: u64,
    body: &str,
    note: &Note,
) -> Result<u64, StoreError> {
    // Each statement of a write is prepared once for the connection and kept (rusqlite's cache).
    let updated = connection
        .prepare_cached(
            "UPDATE characters SET body = ?1, revision = revision + 1
             WHERE id = ?2 AND revision = ?3",
        )
        .and_then(|mut statement| statement.execute(params![body, id, expected as i64]))
        .map_err(backend)?;
    if updated == 1 {
        keep(connection, id, expected + 1, body, note)?;
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

/// Keeps `revision` in the history of `id`, dropping the revisions `note.keep` no longer keeps.
fn keep(
    connection: &Connection,
    id: &str,
    revision: u64,
    body: &str,
    note: &Note,
) -> Result<(), StoreError> {
    let at = now();
    connection
        .prepare_cached(
            "INSERT OR REPLACE INTO revisions (id, revision, body, author, what, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .and_then(|mut statement| {
            statement.execute(params![
                id,
                revision as i64,
                body,
                note.author,
                note.what,
                at
            ])
        })
        .map_err(backend)?;
    let count = note.keep.count.min(i64::MAX as u64) as i64;
    // Bounded by count alone (the default), the revisions to drop are a range of the key: only
    // they are visited, not every kept revision's row for its time.
    let dropped = match note.keep.max_age {
        None => connection
            .prepare_cached(
                "DELETE FROM revisions WHERE id = ?1 AND revision < ?2 AND revision <= ?2 - ?3",
            )
            .and_then(|mut statement| statement.execute(params![id, revision as i64, count])),
        Some(_) => connection
            .prepare_cached(
                "DELETE FROM revisions WHERE id = ?1 AND revision < ?2
                 AND (revision <= ?2 - ?3 OR at < ?4)",
            )
            .and_then(|mut statement| {
                statement.execute(params![id, revision as i64, count, note.keep.oldest(at)])
            }),
    };
    dropped.map_err(backend)?;
    Ok(())
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

    #[test]
    fn saves_committed_together_each_win_or_conflict_on_their_own_revision() {
        let dir = std::env::temp_dir().join(format!("ocf-group-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("store.sqlite3");
        let store = std::sync::Arc::new(SqliteStore::open(path.to_str().unwrap()).unwrap());
        for c in 0..4 {
            store.create(&format!("pc{c}"), "{}", None).unwrap();
        }
        // Two writers per character, each making 20 writes, retrying on conflict: every write
        // lands exactly once.
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let store = store.clone();
                std::thread::spawn(move || {
                    let id = format!("pc{}", t % 4);
                    let mut conflicts = 0;
                    for k in 0..20 {
                        loop {
                            let at = store.revision(&id).unwrap().unwrap();
                            match store.save(&id, at, &format!("{{\"t\":{t},\"k\":{k}}}")) {
                                Ok(new) => {
                                    assert_eq!(new, at + 1);
                                    break;
                                }
                                Err(StoreError::Conflict { .. }) => conflicts += 1,
                                Err(e) => panic!("{e}"),
                            }
                        }
                    }
                    conflicts
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        for c in 0..4 {
            assert_eq!(store.revision(&format!("pc{c}")).unwrap(), Some(41));
            let kept = store.history(&format!("pc{c}")).unwrap();
            assert_eq!(kept.len(), 41);
            assert_eq!(kept[0].revision, 41);
        }
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
