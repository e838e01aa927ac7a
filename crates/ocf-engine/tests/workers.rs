//! The sessions of a process share their deep-stack worker threads (issue 35): each reserves
//! `DEEP_STACK` of address space, so one per session made six open sessions reserve 6 GiB. One
//! caller at a time is served by one thread, however many sessions it holds.

mod common;

/// The threads of this process named as the sheet workers are.
fn sheet_workers() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|tasks| {
            tasks
                .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                .filter(|name| name.starts_with("ocf-sheet"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn six_sessions_computed_one_after_another_share_one_worker() {
    let rules = "fields: { a: { type: integer, default: 2 } }";
    let mut sessions = Vec::new();
    for _ in 0..6 {
        // Each its own ruleset, as participants pinning different pack versions have.
        let (session, id) = common::open(rules, "");
        let v = common::values(&session, id);
        assert!(v.contains("a = 2"), "{v}");
        sessions.push((session, id));
    }
    for (session, id) in &sessions {
        let v = common::values(session, *id);
        assert!(v.contains("a = 2"), "{v}");
    }
    if std::path::Path::new("/proc/self/task").exists() {
        assert_eq!(sheet_workers(), 1, "one caller, one worker thread");
    }
}
