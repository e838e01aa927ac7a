//! Bounded memory: a ceiling on the service's resident memory closes the least recently used
//! unwatched characters as others open; a stored file is checked for cost as it is opened.

mod support;

use ocf_service::Limits;
use ocf_service::store::{SqliteStore, Store};
use serde_json::Value;
use support::*;

fn open_ones(addr: std::net::SocketAddr) -> Vec<String> {
    let (status, list) = request(addr, "GET", "/api/characters", None);
    assert_eq!(status, 200, "{list}");
    list.as_array()
        .unwrap()
        .iter()
        .filter(|c| c["open"] == true)
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn over_the_memory_ceiling_opening_a_character_closes_the_least_recently_used() {
    let dir = temp_dir("ceiling");
    // A ceiling every process is over: each open closes the least recently used other.
    let limits = Limits {
        max_memory: Some(1),
        ..Limits::default()
    };
    let addr = start(&dir.join("store.sqlite3"), limits);
    post_fighter(addr, "first");
    post_fighter(addr, "second");
    assert_eq!(open_ones(addr), ["second"]);
    // Closed, not lost: it opens again (and the other one closes).
    let (status, sheet) = request(addr, "GET", "/api/characters/first/sheet", None);
    assert_eq!(status, 200, "{sheet}");
    assert_eq!(open_ones(addr), ["first"]);
}

#[test]
fn a_stored_file_costing_more_than_the_limits_is_refused_as_it_is_opened() {
    let dir = temp_dir("stored-cost");
    let path = dir.join("store.sqlite3");
    let fighter: Value = serde_yaml::from_str(
        &std::fs::read_to_string(repo().join("testdata/characters/fighter-5.yaml")).unwrap(),
    )
    .unwrap();
    // Stored by another program, under no limits.
    SqliteStore::open(path.to_str().unwrap())
        .unwrap()
        .create("big", &fighter.to_string(), None)
        .unwrap();
    let limits = Limits {
        max_values: 1,
        ..Limits::default()
    };
    let addr = start(&path, limits);
    let (status, refused) = request(addr, "GET", "/api/characters/big/sheet", None);
    assert_eq!(status, 422, "{refused}");
    assert_eq!(codes(&refused), ["safety-limit-exceeded"]);
    assert!(open_ones(addr).is_empty());
    // Still stored, and its file still reads (to be fixed or deleted).
    assert_eq!(request(addr, "GET", "/api/characters/big", None).0, 200);
}
