//! `cargo bench -p ocf-cli --bench serve_load`: 100 concurrent clients through `ocf serve` over
//! loopback, each making 50 acknowledged edits: first each editing a character of its own (one
//! writer per character), then in fives on one character (five writers per character, retrying on
//! `conflict`), then one writer per character again with the service killed and restarted
//! halfway, all over SQLite; then, where PostgreSQL's programs are installed, one and five writers
//! per character over two instances of the service on one PostgreSQL store (fsync on), client `i`
//! talking to instance `i mod 2`. Prints acknowledged edits per second, p50 and p99 of a PUT and of
//! an edit with its retries: the figures of docs/perf.md. Bounded in count (`OCF_LOAD_CLIENTS`,
//! `OCF_LOAD_EDITS`), not in time. `OCF_LOAD_SQLITE=synchronous=normal&group=off` (say) runs the
//! SQLite store with another durability (docs/service.md, "Durability"); `OCF_LOAD_RUNS=sqlite`,
//! `=paced`, `=postgres` or `=memory` runs only those; the paced run offers `OCF_LOAD_RATE` edits
//! a second (1 500) and measures the PUT's latency at that rate. It also prints the memory per open character (the
//! service's resident memory with one character open, then with 100 more), and for each run without a
//! kill the CPU time per acknowledged edit of the service and of the clients. Each client keeps its
//! connection (keep-alive); the clock starts once every client has stored and read its character.
//! Push latency between instances is `cargo bench -p ocf-service --bench push`.

#[path = "../tests/load/mod.rs"]
mod load;
#[path = "../../ocf-service/tests/support/postgres.rs"]
mod postgres;

fn main() {
    let count = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let clients = count("OCF_LOAD_CLIENTS", 100);
    let edits = count("OCF_LOAD_EDITS", 50);
    let options = std::env::var("OCF_LOAD_SQLITE").unwrap_or_default();
    let runs = std::env::var("OCF_LOAD_RUNS").unwrap_or_default();
    let dir = std::env::temp_dir().join(format!("ocf-serve-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    if runs.is_empty() || runs == "sqlite" {
        for (name, writers, kill) in [
            ("one writer per character", 1, None),
            ("five writers per character", 5, None),
            ("one writer, killed halfway", 1, Some(clients * edits / 2)),
        ] {
            let mut store = format!(
                "sqlite:{}",
                dir.join(format!("{}.sqlite3", name.replace([' ', ','], "-")))
                    .display()
            );
            if !options.is_empty() {
                store = format!("{store}?{options}");
            }
            let server = load::Server::start_on(&store, load::free_addr());
            let report = load::run_shared(server, clients, writers, edits, kill);
            print_report(&format!("SQLite, {name}"), clients, writers, edits, &report);
        }
    }
    if runs.is_empty() || runs == "paced" {
        // A load offered at a rate (1 500 edits/s by default, `OCF_LOAD_RATE`): each client edits
        // its own character every `clients / rate` seconds. The closed loop above measures how
        // many edits the service acknowledges; its latencies are that loop's queue (100 clients
        // waiting on one another: Little's law gives a mean of clients / throughput). Here the
        // latency is a PUT's own at that rate.
        let rate = count("OCF_LOAD_RATE", 1500).max(1);
        let pace = std::time::Duration::from_secs_f64(clients as f64 / rate as f64);
        let server = load::Server::start(&dir.join("paced.sqlite3"), load::free_addr());
        let report = load::run_on(vec![server], clients, 1, edits, None, Some(pace));
        print_report(
            &format!("SQLite, one writer per character, offered {rate} edits/s"),
            clients,
            1,
            edits,
            &report,
        );
    }
    if runs.is_empty() || runs == "memory" {
        // Memory per open character: the service's resident memory with one character open (its
        // ruleset made), then with `clients` more.
        let server = load::Server::start(&dir.join("memory.sqlite3"), load::free_addr());
        load::create(server.addr, 0..1);
        let one = server.resident();
        load::create(server.addr, 1..clients + 1);
        if let (Some(one), Some(all)) = (one, server.resident()) {
            println!(
                "memory: {:.1} MiB with one character open, {:.1} MiB with {}: {:.2} MiB per open \
                 character",
                one as f64 / 1048576.0,
                all as f64 / 1048576.0,
                clients + 1,
                (all.saturating_sub(one)) as f64 / clients as f64 / 1048576.0
            );
        }
    }
    if runs.is_empty() || runs == "postgres" {
        for (name, writers) in [
            ("one writer per character", 1),
            ("five writers per character", 5),
        ] {
            // A fresh server per run: the runs' characters have the same IDs.
            let Some(pg) = postgres::Postgres::start_with(&format!("serve-load-{writers}"), true)
            else {
                break;
            };
            let servers = vec![
                load::Server::start_on(&pg.url, load::free_addr()),
                load::Server::start_on(&pg.url, load::free_addr()),
            ];
            let report = load::run_on(servers, clients, writers, edits, None, None);
            print_report(
                &format!("PostgreSQL, two instances, {name}"),
                clients,
                writers,
                edits,
                &report,
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn print_report(name: &str, clients: usize, writers: usize, edits: usize, report: &load::Report) {
    let lost = report
        .finals
        .iter()
        .filter(|(v, _)| *v != load::saved(edits as i64))
        .count();
    let doubled = report
        .finals
        .iter()
        .filter(|(_, r)| *r != (edits * writers) as u64 + 1)
        .count();
    println!(
        "{name}: {clients} clients x {edits} edits in {:.2?}: {:.0} edits/s; PUT p50 {:.2?}, \
         p99 {:.2?}; edit with its retries p50 {:.2?}, p99 {:.2?}; {} conflicts; lost {lost}, \
         doubled {doubled}, answers lost to the kill and found stored {}",
        report.elapsed,
        (clients * edits) as f64 / report.elapsed.as_secs_f64(),
        report.attempt_percentile(0.5),
        report.attempt_percentile(0.99),
        report.percentile(0.5),
        report.percentile(0.99),
        report.conflicts,
        report.recovered,
    );
    // CPU per acknowledged edit: the service's (all its instances) and the clients' own, which
    // run on the same cores.
    let per_edit = |cpu: std::time::Duration| cpu / (clients * edits) as u32;
    if let Some(service) = report.service_cpu {
        println!(
            "  CPU per edit: service {:.2?}, clients {:.2?}",
            per_edit(service),
            report.client_cpu.map(per_edit).unwrap_or_default()
        );
    }
}
