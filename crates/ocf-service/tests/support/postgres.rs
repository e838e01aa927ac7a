#![allow(dead_code)]
//! A throwaway PostgreSQL server for the service's tests and benchmarks (ocf-cli's `serve_load`
//! includes this file too).

use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

/// A PostgreSQL server of its own in a temporary folder, on a free loopback port, stopped and
/// removed when dropped. `None` when the server's programs are not installed (`.ci/run` installs
/// them; `OCF_REQUIRE_POSTGRES=1` makes their absence a failure).
pub struct Postgres {
    dir: PathBuf,
    server: std::process::Child,
    pub url: String,
}

impl Postgres {
    pub fn start(name: &str) -> Option<Postgres> {
        Postgres::start_with(name, false)
    }

    /// With `fsync` on, as a deployment runs it (the tests turn it off: they measure nothing and
    /// lose nothing to a power cut).
    pub fn start_with(name: &str, fsync: bool) -> Option<Postgres> {
        let Some(bin) = postgres_bin() else {
            assert!(
                std::env::var_os("OCF_REQUIRE_POSTGRES").is_none(),
                "PostgreSQL's programs (initdb, postgres) are not installed"
            );
            eprintln!("skipped: PostgreSQL is not installed (apt-get install postgresql)");
            return None;
        };
        let dir = std::env::temp_dir().join(format!("ocf-pg-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("data");
        // PostgreSQL refuses to run as root: as root, the folder goes to the `postgres` user and
        // the programs run as it.
        let root = std::process::Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
        if root {
            let status = std::process::Command::new("chown")
                .args(["-R", "postgres"])
                .arg(&dir)
                .status()
                .unwrap();
            assert!(status.success());
        }
        let run = |program: &str| {
            let mut command = if root {
                let mut c = std::process::Command::new("runuser");
                c.args(["-u", "postgres", "--"]).arg(bin.join(program));
                c
            } else {
                std::process::Command::new(bin.join(program))
            };
            command.stdout(std::process::Stdio::null());
            command.stderr(std::process::Stdio::null());
            command
        };
        let status = run("initdb")
            .args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"])
            .arg(&data)
            .status()
            .unwrap();
        assert!(status.success(), "initdb failed");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let server = run("postgres")
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-k"])
            .arg(&dir)
            .args(["-c", "listen_addresses=127.0.0.1", "-c"])
            .arg(if fsync { "fsync=on" } else { "fsync=off" })
            .spawn()
            .unwrap();
        let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
        let started = std::time::Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "postgres did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // Accepting connections comes a moment after listening.
        let store = loop {
            match ocf_service::store::PostgresStore::open(&url) {
                Ok(store) => break store,
                Err(_) if started.elapsed() < Duration::from_secs(60) => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                Err(e) => panic!("postgres did not accept connections: {e}"),
            }
        };
        drop(store);
        Some(Postgres { dir, server, url })
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .arg(self.server.id().to_string())
            .status();
        let _ = self.server.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The folder of PostgreSQL's server programs: `pg_config --bindir`, else Debian's
/// `/usr/lib/postgresql/<version>/bin`.
fn postgres_bin() -> Option<PathBuf> {
    let from_config = std::process::Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .filter(|dir| dir.join("initdb").exists() && dir.join("postgres").exists());
    from_config.or_else(|| {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|dir| dir.join("initdb").exists() && dir.join("postgres").exists())
            .collect();
        versions.sort();
        versions.pop()
    })
}
