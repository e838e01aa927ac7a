//! The shared store: PostgreSQL, for several service instances behind a load balancer. As with
//! SQLite, a write is one `UPDATE … WHERE revision = $3`: under PostgreSQL's row locks the second of
//! two racing writers finds the revision moved on and updates nothing, so it gets `conflict`.

use std::sync::Mutex;

use postgres::{Client, NoTls};

use super::{Store, StoreError, Stored};

pub struct PostgresStore {
    config: String,
    client: Mutex<Option<Client>>,
}

fn backend(error: postgres::Error) -> StoreError {
    StoreError::Backend(format!("postgres: {error}"))
}

impl PostgresStore {
    /// Connects to `config` (a `postgres://user@host:port/db` URL or `host=… user=…` pairs) and
    /// makes the table if it is missing.
    pub fn open(config: &str) -> Result<PostgresStore, StoreError> {
        let store = PostgresStore {
            config: config.to_owned(),
            client: Mutex::new(None),
        };
        store.with(|client| {
            client.batch_execute(
                "CREATE TABLE IF NOT EXISTS ocf_characters (
                    id TEXT PRIMARY KEY NOT NULL,
                    revision BIGINT NOT NULL,
                    body TEXT NOT NULL
                )",
            )
        })?;
        Ok(store)
    }

    /// Runs `f` on the connection, connecting again first if the last one was lost (a restarted
    /// server): a request fails only when the server is down, not after it comes back.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        let mut slot = self.client.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_none_or(Client::is_closed) {
            *slot = Some(Client::connect(&self.config, NoTls).map_err(backend)?);
        }
        let client = slot.as_mut().expect("connected above");
        f(client).map_err(backend)
    }
}

impl Store for PostgresStore {
    fn load(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        let row = self.with(|c| {
            c.query_opt(
                "SELECT revision, body FROM ocf_characters WHERE id = $1",
                &[&id],
            )
        })?;
        Ok(row.map(|row| Stored {
            revision: row.get::<_, i64>(0) as u64,
            body: row.get(1),
        }))
    }

    fn revision(&self, id: &str) -> Result<Option<u64>, StoreError> {
        let row = self
            .with(|c| c.query_opt("SELECT revision FROM ocf_characters WHERE id = $1", &[&id]))?;
        Ok(row.map(|row| row.get::<_, i64>(0) as u64))
    }

    fn create(&self, id: &str, body: &str) -> Result<u64, StoreError> {
        let inserted = self.with(|c| {
            c.execute(
                "INSERT INTO ocf_characters (id, revision, body) VALUES ($1, 1, $2)
                 ON CONFLICT (id) DO NOTHING",
                &[&id, &body],
            )
        })?;
        if inserted == 0 {
            return Err(StoreError::Exists(id.to_owned()));
        }
        Ok(1)
    }

    fn save(&self, id: &str, expected: u64, body: &str) -> Result<u64, StoreError> {
        let expected_i = expected as i64;
        let updated = self.with(|c| {
            c.execute(
                "UPDATE ocf_characters SET body = $1, revision = revision + 1
                 WHERE id = $2 AND revision = $3",
                &[&body, &id, &expected_i],
            )
        })?;
        if updated == 1 {
            return Ok(expected + 1);
        }
        let current = self.revision(id)?;
        Err(StoreError::Conflict {
            id: id.to_owned(),
            given: expected,
            current: current.unwrap_or(0),
        })
    }

    fn list(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let rows =
            self.with(|c| c.query("SELECT id, revision FROM ocf_characters ORDER BY id", &[]))?;
        Ok(rows
            .iter()
            .map(|row| (row.get(0), row.get::<_, i64>(1) as u64))
            .collect())
    }
}
