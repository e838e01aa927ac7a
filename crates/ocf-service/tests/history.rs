//! A character's history: every acknowledged write kept as a revision with who made it and what it
//! did, any kept revision read, a revert and an undo made as new writes, the history bounded.

mod support;

use ocf_service::Limits;
use ocf_service::store::Keep;
use serde_json::{Value, json};
use support::*;

fn hp(addr: std::net::SocketAddr, id: &str) -> Value {
    let (status, field) = request(
        addr,
        "GET",
        &format!("/api/characters/{id}/fields/hp.current"),
        None,
    );
    assert_eq!(status, 200, "{field}");
    field["value"]["value"].clone()
}

#[test]
fn every_write_is_kept_and_any_revision_is_read_reverted_to_or_undone() {
    let dir = temp_dir("history");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");
    assert_eq!(set(addr, "aldric", "hp.current", 1, json!(30)).0, 200);
    assert_eq!(set(addr, "aldric", "hp.current", 2, json!(12)).0, 200);
    // A refused edit makes no revision.
    assert_eq!(set(addr, "aldric", "hp.current", 3, json!("many")).0, 422);

    let (status, history) = request(addr, "GET", "/api/characters/aldric/history", None);
    assert_eq!(status, 200, "{history}");
    assert_eq!(history["revision"], 3);
    let entries: Vec<(u64, &str)> = history["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["revision"].as_u64().unwrap(), e["what"].as_str().unwrap()))
        .collect();
    assert_eq!(
        entries,
        [
            (3, "set hp.current to 12"),
            (2, "set hp.current to 30"),
            (1, "created")
        ]
    );
    // The open service has no users: no author.
    assert_eq!(history["history"][0]["author"], Value::Null);
    assert!(history["history"][0]["at"].as_i64().unwrap() > 1_700_000_000);

    // Any kept revision reads as the file it was.
    let (status, old) = request(addr, "GET", "/api/characters/aldric/history/2", None);
    assert_eq!(status, 200, "{old}");
    assert_eq!(
        (old["revision"].clone(), old["current"].clone()),
        (json!(2), json!(3))
    );
    assert_eq!(old["character"]["values"]["5e-srd-5.1:hp.current"], 30);
    let (status, none) = request(addr, "GET", "/api/characters/aldric/history/9", None);
    assert_eq!((status, codes(&none)), (404, vec!["unknown-revision"]));

    // Undo: the last change taken back, as revision 4 (revision 3 is still there).
    let (status, undone) = request(
        addr,
        "POST",
        "/api/characters/aldric/undo",
        Some(r#"{"revision":3}"#),
    );
    assert_eq!(status, 200, "{undone}");
    assert_eq!(undone["revision"], 4);
    assert_eq!(
        undone["changes"]["values"]["5e-srd-5.1:hp.current"]["value"],
        30
    );
    assert_eq!(hp(addr, "aldric"), 30);
    // An undo made against a revision that is not the current one is a conflict, as any write.
    let (status, stale) = request(
        addr,
        "POST",
        "/api/characters/aldric/undo",
        Some(r#"{"revision":3}"#),
    );
    assert_eq!((status, codes(&stale)), (409, vec!["conflict"]));

    // Revert to the first revision: a new write, revision 5.
    let (status, reverted) = request(
        addr,
        "POST",
        "/api/characters/aldric/revert",
        Some(r#"{"revision":4,"to":1}"#),
    );
    assert_eq!(status, 200, "{reverted}");
    assert_eq!(reverted["revision"], 5);
    assert_eq!(hp(addr, "aldric"), 44);
    let (_, history) = request(addr, "GET", "/api/characters/aldric/history", None);
    let whats: Vec<&str> = history["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["what"].as_str().unwrap())
        .collect();
    assert_eq!(
        whats,
        [
            "reverted to revision 1",
            "undid revision 3",
            "set hp.current to 12",
            "set hp.current to 30",
            "created"
        ]
    );
    let (status, first) = request(
        addr,
        "POST",
        "/api/characters/aldric/undo",
        Some(r#"{"revision":1}"#),
    );
    assert_eq!(status, 409, "{first}");

    // A deleted character's history goes with it.
    assert_eq!(
        request(addr, "DELETE", "/api/characters/aldric", None).0,
        200
    );
    post_fighter(addr, "aldric");
    let (_, history) = request(addr, "GET", "/api/characters/aldric/history", None);
    assert_eq!(history["history"].as_array().unwrap().len(), 1);
}

#[test]
fn the_history_keeps_only_the_newest_revisions_it_is_bounded_to() {
    let dir = temp_dir("history-bound");
    let limits = Limits {
        history: Keep {
            count: 3,
            max_age: None,
        },
        ..Limits::default()
    };
    let addr = start(&dir.join("store.sqlite3"), limits);
    post_fighter(addr, "aldric");
    for revision in 1..=5 {
        let (status, answer) = set(addr, "aldric", "hp.current", revision, json!(revision));
        assert_eq!(status, 200, "{answer}");
    }
    let (_, history) = request(addr, "GET", "/api/characters/aldric/history", None);
    let kept: Vec<u64> = history["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["revision"].as_u64().unwrap())
        .collect();
    assert_eq!(kept, [6, 5, 4]);
    let (status, gone) = request(
        addr,
        "POST",
        "/api/characters/aldric/revert",
        Some(r#"{"revision":6,"to":2}"#),
    );
    assert_eq!((status, codes(&gone)), (404, vec!["unknown-revision"]));
}
