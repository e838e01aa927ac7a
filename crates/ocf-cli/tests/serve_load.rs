//! `ocf serve` under a small load of concurrent clients, once straight through and once killed and
//! restarted halfway: no acknowledged edit is lost and none is applied twice (each character ends
//! at its last value, one revision per edit). The figures come from `cargo bench -p ocf-cli --bench
//! serve_load`.

mod load;

fn check(report: &load::Report, edits: usize) {
    for (i, (value, revision)) in report.finals.iter().enumerate() {
        assert_eq!(*value, load::saved(edits as i64), "load-{i} lost an edit");
        assert_eq!(*revision, edits as u64 + 1, "load-{i} has an edit twice");
    }
}

#[test]
fn concurrent_clients_lose_and_double_nothing_even_across_a_kill() {
    let dir = std::env::temp_dir().join(format!("ocf-serve-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (clients, edits) = (8, 12);

    let server = load::Server::start(&dir.join("straight.sqlite3"), load::free_addr());
    let report = load::run(server, clients, edits, None);
    check(&report, edits);
    assert_eq!(report.latencies.len(), clients * edits);

    let server = load::Server::start(&dir.join("killed.sqlite3"), load::free_addr());
    let report = load::run(server, clients, edits, Some(clients * edits / 2));
    check(&report, edits);
    let _ = std::fs::remove_dir_all(&dir);
}
