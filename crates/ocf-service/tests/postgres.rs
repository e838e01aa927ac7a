//! The PostgreSQL store against a real server (a throwaway one, started by the test): revisions and
//! conflicts as with SQLite, and two service instances over the one store, as behind a load
//! balancer.

mod support;

use ocf_service::Limits;
use ocf_service::store::{PostgresStore, Store, StoreError};
use serde_json::json;
use support::*;

#[test]
fn two_instances_over_one_postgres_store_share_every_write_and_refuse_stale_ones() {
    let Some(server) = Postgres::start("instances") else {
        return;
    };
    let store = PostgresStore::open(&server.url).unwrap();
    assert_eq!(store.create("pc", "{}", None), Ok(1));
    assert_eq!(
        store.create("pc", "{}", None),
        Err(StoreError::Exists("pc".into()))
    );
    assert_eq!(store.save("pc", 1, "{\"a\":1}"), Ok(2));
    assert!(matches!(
        store.save("pc", 1, "{}"),
        Err(StoreError::Conflict { current: 2, .. })
    ));
    assert_eq!(store.load("pc").unwrap().unwrap().body, "{\"a\":1}");

    let a = start_on(
        Box::new(PostgresStore::open(&server.url).unwrap()),
        Limits::default(),
    );
    let b = start_on(
        Box::new(PostgresStore::open(&server.url).unwrap()),
        Limits::default(),
    );
    post_fighter(a, "aldric");
    let (status, sheet) = request(b, "GET", "/api/characters/aldric/sheet", None);
    assert_eq!(status, 200, "{sheet}");
    assert_eq!(sheet["revision"], 1);
    assert_eq!(set(b, "aldric", "hp.current", 1, json!(5)).0, 200);
    let (status, answer) = set(a, "aldric", "hp.current", 1, json!(6));
    assert_eq!(
        (status, codes(&answer)),
        (409, vec!["conflict"]),
        "{answer}"
    );
    let (_, sheet) = request(a, "GET", "/api/characters/aldric/sheet", None);
    assert_eq!(sheet["revision"], 2);
    assert_eq!(
        sheet["sheet"]["values"]["5e-srd-5.1:hp.current"]["value"],
        5
    );
}
