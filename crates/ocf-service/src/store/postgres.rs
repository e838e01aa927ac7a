//! The shared store: PostgreSQL, for several service instances behind a load balancer. As with
//! SQLite, a write is one `UPDATE … WHERE revision = $3`: under PostgreSQL's row locks the second of
//! two racing writers finds the revision moved on and updates nothing, so it gets `conflict`.
//!
//! The server is reached over TLS (rustls, the system's root certificates) whenever it offers it;
//! a server on another machine must offer it (`sslmode=require` unless the URL says otherwise), so
//! passwords and characters never cross a network in the clear.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use postgres::config::{Host, SslMode};
use postgres::{Client, Config, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{
    Account, Credential, Listed, Note, Ownership, Revision, Store, StoreError, Stored, now,
};

pub struct PostgresStore {
    config: Config,
    tls: MakeRustlsConnect,
    /// A few connections, each made when first needed: requests on different characters use
    /// different ones rather than queueing on one.
    clients: Vec<Mutex<Option<Connection>>>,
    /// How long the listener waits for a notification before asking whether it is still wanted.
    listen_tick: Duration,
}

/// A connection, with the statements of the requests' hot path prepared on it once (each use is
/// then one round trip, not a parse and plan first).
struct Connection {
    client: Client,
    prepared: HashMap<&'static str, Statement>,
}

/// How long the listener waits for a notification before asking whether it is still wanted.
const LISTEN_TICK: Duration = Duration::from_secs(5);

/// Connections a store keeps to the server.
const CONNECTIONS: usize = 4;

impl PostgresStore {
    /// A free connection, else the next one to come free.
    fn client(&self) -> std::sync::MutexGuard<'_, Option<Connection>> {
        for client in &self.clients {
            if let Ok(client) = client.try_lock() {
                return client;
            }
        }
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let next = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % self.clients.len();
        self.clients[next].lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn backend(error: postgres::Error) -> StoreError {
    StoreError::Backend(format!("postgres: {error}"))
}

/// The connection's settings: `url` as given, with `sslmode=require` added for a server that is
/// not on this machine when the URL names no `sslmode`.
fn config(url: &str) -> Result<Config, StoreError> {
    let mut config = Config::from_str(url)
        .map_err(|e| StoreError::Backend(format!("postgres: the store URL does not read: {e}")))?;
    let local = config.get_hosts().iter().all(|host| match host {
        Host::Tcp(name) => {
            name == "localhost"
                || name
                    .trim_matches(|c| c == '[' || c == ']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        #[cfg(unix)]
        Host::Unix(_) => true,
    });
    let says_mode = url.contains("sslmode=");
    if !local && !says_mode {
        config.ssl_mode(SslMode::Require);
    }
    Ok(config)
}

/// TLS with the system's root certificates (a private CA is added to the system's store).
fn tls() -> Result<MakeRustlsConnect, StoreError> {
    // ring rather than rustls' default aws-lc-rs, whose build wants CMake: a fresh machine needs
    // only a C compiler, as for bundled SQLite. rustls 0.23.48 deprecates ring's provider for
    // lacking post-quantum key exchange, which a link to the database can do without for now.
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    for cert in found.certs {
        let _ = roots.add(cert);
    }
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError::Backend(format!("postgres: TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

impl PostgresStore {
    /// Connects to `url` (a `postgres://user@host:port/db` URL or `host=… user=…` pairs) and
    /// makes the tables if they are missing.
    pub fn open(url: &str) -> Result<PostgresStore, StoreError> {
        let store = PostgresStore {
            config: config(url)?,
            tls: tls()?,
            clients: (0..CONNECTIONS).map(|_| Mutex::new(None)).collect(),
            listen_tick: LISTEN_TICK,
        };
        store.with(|client| {
            client.batch_execute(
                "CREATE TABLE IF NOT EXISTS ocf_characters (
                    id TEXT PRIMARY KEY NOT NULL,
                    revision BIGINT NOT NULL,
                    body TEXT NOT NULL
                );
                ALTER TABLE ocf_characters ADD COLUMN IF NOT EXISTS owner TEXT;
                ALTER TABLE ocf_characters
                    ADD COLUMN IF NOT EXISTS shared BOOLEAN NOT NULL DEFAULT FALSE;
                CREATE TABLE IF NOT EXISTS ocf_accounts (
                    name TEXT PRIMARY KEY NOT NULL,
                    role TEXT NOT NULL,
                    hash TEXT NOT NULL
                );
                CREATE TABLE IF NOT EXISTS ocf_credentials (
                    digest TEXT PRIMARY KEY NOT NULL,
                    username TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    label TEXT NOT NULL,
                    expires BIGINT
                );
                CREATE TABLE IF NOT EXISTS ocf_settings (
                    name TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                );
                CREATE TABLE IF NOT EXISTS ocf_revisions (
                    id TEXT NOT NULL,
                    revision BIGINT NOT NULL,
                    body TEXT NOT NULL,
                    author TEXT,
                    what TEXT NOT NULL,
                    at BIGINT NOT NULL,
                    PRIMARY KEY (id, revision)
                );",
            )
        })?;
        Ok(store)
    }

    /// The store with its listener waking every `tick` when no notification comes (5 s by
    /// default): each quiet tick is a catch-up call of the listen callback.
    pub fn with_listen_tick(mut self, tick: Duration) -> PostgresStore {
        self.listen_tick = tick;
        self
    }

    /// Runs `f` on the connection, connecting again first if the last one was lost (a restarted
    /// server): a request fails only when the server is down, not after it comes back.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        let mut slot = self.connection()?;
        let connection = slot.as_mut().expect("connected");
        f(&mut connection.client).map_err(backend)
    }

    /// A connection, connected again first if the last one was lost (its statements with it).
    fn connection(&self) -> Result<std::sync::MutexGuard<'_, Option<Connection>>, StoreError> {
        let mut slot = self.client();
        if slot.as_ref().is_none_or(|c| c.client.is_closed()) {
            *slot = Some(Connection {
                client: self.config.connect(self.tls.clone()).map_err(backend)?,
                prepared: HashMap::new(),
            });
        }
        Ok(slot)
    }

    /// Runs `f` with `sql` prepared on the connection (once per connection), as [`Self::with`].
    fn with_prepared<T>(
        &self,
        sql: &'static str,
        f: impl FnOnce(&mut Client, &Statement) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        let mut slot = self.connection()?;
        let connection = slot.as_mut().expect("connected");
        let statement = match connection.prepared.get(sql) {
            Some(statement) => statement.clone(),
            None => {
                let statement = connection.client.prepare(sql).map_err(backend)?;
                connection.prepared.insert(sql, statement.clone());
                statement
            }
        };
        f(&mut connection.client, &statement).map_err(backend)
    }
}

fn credential(row: &postgres::Row) -> Credential {
    Credential {
        digest: row.get(0),
        user: row.get(1),
        kind: row.get(2),
        label: row.get(3),
        expires: row.get(4),
    }
}

fn account(row: &postgres::Row) -> Account {
    Account {
        name: row.get(0),
        role: row.get(1),
        hash: row.get(2),
    }
}

impl Store for PostgresStore {
    fn load(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        let row = self.with_prepared(
            "SELECT revision, body FROM ocf_characters WHERE id = $1",
            |c, statement| c.query_opt(statement, &[&id]),
        )?;
        Ok(row.map(|row| Stored {
            revision: row.get::<_, i64>(0) as u64,
            body: row.get(1),
        }))
    }

    fn revision(&self, id: &str) -> Result<Option<u64>, StoreError> {
        let row = self.with_prepared(
            "SELECT revision FROM ocf_characters WHERE id = $1",
            |c, statement| c.query_opt(statement, &[&id]),
        )?;
        Ok(row.map(|row| row.get::<_, i64>(0) as u64))
    }

    fn create_noted(
        &self,
        id: &str,
        body: &str,
        owner: Option<&str>,
        note: &Note,
    ) -> Result<u64, StoreError> {
        let at = now();
        // The character and its history's first entry are one statement.
        let inserted = self.with(|c| {
            c.query(
                "WITH made AS (
                     INSERT INTO ocf_characters (id, revision, body, owner) VALUES ($1, 1, $2, $3)
                     ON CONFLICT (id) DO NOTHING RETURNING id
                 ), kept AS (
                     INSERT INTO ocf_revisions (id, revision, body, author, what, at)
                     SELECT id, 1, $2, $4, $5, $6 FROM made
                     ON CONFLICT (id, revision) DO UPDATE SET body = excluded.body,
                         author = excluded.author, what = excluded.what, at = excluded.at
                 )
                 SELECT id FROM made",
                &[&id, &body, &owner, &note.author, &note.what, &at],
            )
        })?;
        if inserted.is_empty() {
            return Err(StoreError::Exists(id.to_owned()));
        }
        Ok(1)
    }

    fn save_noted(
        &self,
        id: &str,
        expected: u64,
        body: &str,
        note: &Note,
    ) -> Result<u64, StoreError> {
        let expected_i = expected as i64;
        let at = now();
        let count = note.keep.count.min(i64::MAX as u64) as i64;
        let oldest = note.keep.oldest(at);
        // The write, its entry in the history (older ones past the bound dropped) and its
        // notification to every listening instance are one statement: told at its commit, and
        // only when it wrote.
        let updated = self.with_prepared(
            "WITH written AS (
                     UPDATE ocf_characters SET body = $1, revision = revision + 1
                     WHERE id = $2 AND revision = $3 RETURNING id, revision
                 ), kept AS (
                     INSERT INTO ocf_revisions (id, revision, body, author, what, at)
                     SELECT id, revision, $1, $4, $5, $6 FROM written
                     ON CONFLICT (id, revision) DO UPDATE SET body = excluded.body,
                         author = excluded.author, what = excluded.what, at = excluded.at
                 ), dropped AS (
                     DELETE FROM ocf_revisions r USING written w
                     WHERE r.id = w.id AND r.revision < w.revision
                       AND (r.revision <= w.revision - $7 OR r.at < $8)
                 )
                 SELECT pg_notify('ocf_changed', id) FROM written",
            |c, statement| {
                c.query(
                    statement,
                    &[
                        &body,
                        &id,
                        &expected_i,
                        &note.author,
                        &note.what,
                        &at,
                        &count,
                        &oldest,
                    ],
                )
            },
        )?;
        if updated.len() == 1 {
            return Ok(expected + 1);
        }
        let current = self.revision(id)?;
        Err(StoreError::Conflict {
            id: id.to_owned(),
            given: expected,
            current: current.unwrap_or(0),
        })
    }

    fn history(&self, id: &str) -> Result<Vec<Revision>, StoreError> {
        let rows = self.with(|c| {
            c.query(
                "SELECT revision, author, what, at FROM ocf_revisions WHERE id = $1
                 ORDER BY revision DESC",
                &[&id],
            )
        })?;
        Ok(rows
            .iter()
            .map(|row| Revision {
                revision: row.get::<_, i64>(0) as u64,
                author: row.get(1),
                what: row.get(2),
                at: row.get(3),
            })
            .collect())
    }

    fn load_revision(&self, id: &str, revision: u64) -> Result<Option<Stored>, StoreError> {
        let revision_i = revision as i64;
        let row = self.with(|c| {
            c.query_opt(
                "SELECT body FROM ocf_revisions WHERE id = $1 AND revision = $2",
                &[&id, &revision_i],
            )
        })?;
        Ok(row.map(|row| Stored {
            revision,
            body: row.get(0),
        }))
    }

    fn list(&self) -> Result<Vec<Listed>, StoreError> {
        let rows = self.with(|c| {
            c.query(
                "SELECT id, revision, owner, shared FROM ocf_characters ORDER BY id",
                &[],
            )
        })?;
        Ok(rows
            .iter()
            .map(|row| Listed {
                id: row.get(0),
                revision: row.get::<_, i64>(1) as u64,
                ownership: Ownership {
                    owner: row.get(2),
                    shared: row.get(3),
                },
            })
            .collect())
    }

    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        self.with(|c| {
            c.query(
                "WITH removed AS (DELETE FROM ocf_characters WHERE id = $1 RETURNING id),
                 forgotten AS (DELETE FROM ocf_revisions WHERE id = $1)
                 SELECT pg_notify('ocf_changed', id) FROM removed",
                &[&id],
            )
        })
        .map(|rows| !rows.is_empty())
    }

    fn listen(
        &self,
        mut changed: Box<dyn FnMut(Option<&str>) -> bool + Send>,
    ) -> Result<bool, StoreError> {
        use postgres::fallible_iterator::FallibleIterator;
        let (config, tls) = (self.config.clone(), self.tls.clone());
        let connect = move || -> Result<Client, postgres::Error> {
            let mut client = config.connect(tls.clone())?;
            client.batch_execute("LISTEN ocf_changed")?;
            Ok(client)
        };
        let mut client = connect().map_err(backend)?;
        let tick = self.listen_tick;
        std::thread::Builder::new()
            .name("ocf-listen".into())
            .spawn(move || {
                loop {
                    let lost = loop {
                        // A fresh wait each time: postgres' timeout iterator does not start its
                        // timer again after it ran out, so a second `next` on the same one answers
                        // at once, and this loop would spin (the load failure of docs/perf.md).
                        let told = client.notifications().timeout_iter(tick).next();
                        let wanted = match told {
                            Ok(Some(told)) => changed(Some(told.payload())),
                            // The server closed the connection: the iterator says "nothing"
                            // rather than an error.
                            Ok(None) if client.is_closed() => {
                                break "the server closed the connection".to_owned();
                            }
                            // Quiet for a while: a chance to stop, and to catch up on
                            // anything a notification could not tell.
                            Ok(None) => changed(None),
                            Err(error) => break error.to_string(),
                        };
                        if !wanted {
                            return;
                        }
                    };
                    tracing::warn!(error = %lost, "listening for other instances' writes");
                    // Lost: connect again, then catch up on what was missed meanwhile.
                    client = loop {
                        std::thread::sleep(Duration::from_secs(1));
                        match connect() {
                            Ok(client) => break client,
                            Err(error) => {
                                tracing::warn!(%error, "listening for other instances' writes")
                            }
                        }
                    };
                    if !changed(None) {
                        return;
                    }
                }
            })
            .map_err(|e| StoreError::Backend(e.to_string()))?;
        Ok(true)
    }

    fn ownership(&self, id: &str) -> Result<Option<Ownership>, StoreError> {
        let row = self.with_prepared(
            "SELECT owner, shared FROM ocf_characters WHERE id = $1",
            |c, statement| c.query_opt(statement, &[&id]),
        )?;
        Ok(row.map(|row| Ownership {
            owner: row.get(0),
            shared: row.get(1),
        }))
    }

    fn set_ownership(&self, id: &str, ownership: &Ownership) -> Result<bool, StoreError> {
        self.with(|c| {
            c.execute(
                "UPDATE ocf_characters SET owner = $1, shared = $2 WHERE id = $3",
                &[&ownership.owner, &ownership.shared, &id],
            )
        })
        .map(|n| n > 0)
    }

    fn accounts(&self) -> Result<Vec<Account>, StoreError> {
        let rows = self.with(|c| {
            c.query(
                "SELECT name, role, hash FROM ocf_accounts ORDER BY name",
                &[],
            )
        })?;
        Ok(rows.iter().map(account).collect())
    }

    fn account(&self, name: &str) -> Result<Option<Account>, StoreError> {
        let row = self.with(|c| {
            c.query_opt(
                "SELECT name, role, hash FROM ocf_accounts WHERE name = $1",
                &[&name],
            )
        })?;
        Ok(row.as_ref().map(account))
    }

    fn put_account(&self, a: &Account) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT INTO ocf_accounts (name, role, hash) VALUES ($1, $2, $3)
                 ON CONFLICT (name) DO UPDATE SET role = excluded.role, hash = excluded.hash",
                &[&a.name, &a.role, &a.hash],
            )
        })
        .map(|_| ())
    }

    fn remove_account(&self, name: &str) -> Result<bool, StoreError> {
        self.with(|c| {
            let mut transaction = c.transaction()?;
            transaction.execute("DELETE FROM ocf_credentials WHERE username = $1", &[&name])?;
            let removed =
                transaction.execute("DELETE FROM ocf_accounts WHERE name = $1", &[&name])?;
            transaction.commit()?;
            Ok(removed > 0)
        })
    }

    fn add_credential(&self, cr: &Credential) -> Result<(), StoreError> {
        let now = now();
        self.with(|c| {
            c.execute(
                "DELETE FROM ocf_credentials WHERE expires IS NOT NULL AND expires < $1",
                &[&now],
            )?;
            c.execute(
                "INSERT INTO ocf_credentials (digest, username, kind, label, expires)
                 VALUES ($1, $2, $3, $4, $5)",
                &[&cr.digest, &cr.user, &cr.kind, &cr.label, &cr.expires],
            )
        })
        .map(|_| ())
    }

    fn credential(&self, digest: &str, now: i64) -> Result<Option<Credential>, StoreError> {
        let row = self.with(|c| {
            c.query_opt(
                "SELECT digest, username, kind, label, expires FROM ocf_credentials
                 WHERE digest = $1 AND (expires IS NULL OR expires >= $2)",
                &[&digest, &now],
            )
        })?;
        Ok(row.as_ref().map(credential))
    }

    fn credentials(&self, kind: &str) -> Result<Vec<Credential>, StoreError> {
        let rows = self.with(|c| {
            c.query(
                "SELECT digest, username, kind, label, expires FROM ocf_credentials
                 WHERE kind = $1 ORDER BY username, label",
                &[&kind],
            )
        })?;
        Ok(rows.iter().map(credential).collect())
    }

    fn remove_credential(&self, kind: &str, key: &str) -> Result<usize, StoreError> {
        self.with(|c| {
            c.execute(
                "DELETE FROM ocf_credentials WHERE kind = $1 AND (digest = $2 OR label = $2)",
                &[&kind, &key],
            )
        })
        .map(|n| n as usize)
    }

    fn setting(&self, name: &str, fresh: &str) -> Result<String, StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT INTO ocf_settings (name, value) VALUES ($1, $2)
                 ON CONFLICT (name) DO NOTHING",
                &[&name, &fresh],
            )?;
            c.query_one("SELECT value FROM ocf_settings WHERE name = $1", &[&name])
                .map(|row| row.get(0))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_on_another_machine_is_reached_over_tls_unless_the_url_says_otherwise() {
        let mode = |url: &str| config(url).unwrap().get_ssl_mode();
        assert_eq!(mode("postgres://ocf@db.example.org/ocf"), SslMode::Require);
        assert_eq!(mode("postgres://ocf@10.0.0.5:5432/ocf"), SslMode::Require);
        assert_eq!(mode("postgres://ocf@127.0.0.1:5432/ocf"), SslMode::Prefer);
        assert_eq!(mode("postgres://ocf@localhost/ocf"), SslMode::Prefer);
        assert_eq!(
            mode("postgres://ocf@db.example.org/ocf?sslmode=disable"),
            SslMode::Disable
        );
    }
}
