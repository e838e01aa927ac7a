//! The PostgreSQL store against a real server (a throwaway one, started by the test): revisions and
//! conflicts as with SQLite, and two service instances over the one store, as behind a load
//! balancer.

mod support;

use ocf_service::Limits;
use ocf_service::accounts::{self, Role};
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

    // A paused action's signed state continues on the other instance: the key is the store's.
    let start = json!({
        "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" },
        "participants": { "target": [{ "id": "goblin", "values": { "5e-srd-5.1:combat.ac": 15 } }] },
        "policy": { "dice": "pause" },
    });
    let (status, paused) = request(
        a,
        "POST",
        "/api/characters/aldric/actions",
        Some(&start.to_string()),
    );
    assert_eq!(status, 200, "{paused}");
    let body = json!({ "state": paused["result"]["state"], "answer": { "faces": [12] } });
    let (status, next) = request(
        b,
        "POST",
        "/api/characters/aldric/actions/continue",
        Some(&body.to_string()),
    );
    assert_eq!(status, 200, "{next}");
}

#[test]
fn an_edit_on_one_instance_is_told_to_the_other_by_postgres_itself() {
    let Some(server) = Postgres::start("listen") else {
        return;
    };
    // The store tells each write and delete, as it commits, to every store listening: no poll.
    let (a, b) = (
        PostgresStore::open(&server.url).unwrap(),
        PostgresStore::open(&server.url).unwrap(),
    );
    let (told, heard) = std::sync::mpsc::channel();
    let listening = a
        .listen(Box::new(move |id: Option<&str>| {
            if let Some(id) = id {
                let _ = told.send(id.to_owned());
            }
            true
        }))
        .unwrap();
    assert!(listening);
    assert_eq!(b.create("pc", "{}", None), Ok(1));
    assert_eq!(b.save("pc", 1, "{}"), Ok(2));
    // A refused write tells nothing; the delete does.
    assert!(b.save("pc", 1, "{}").is_err());
    assert!(b.delete("pc").unwrap());
    let wait = std::time::Duration::from_secs(30);
    assert_eq!(heard.recv_timeout(wait).unwrap(), "pc");
    assert_eq!(heard.recv_timeout(wait).unwrap(), "pc");
    assert!(
        heard
            .recv_timeout(std::time::Duration::from_millis(300))
            .is_err()
    );

    // Through the service: a subscriber on instance A hears of an edit made on instance B.
    let a = start_on(
        Box::new(PostgresStore::open(&server.url).unwrap()),
        Limits::default(),
    );
    let b = start_on(
        Box::new(PostgresStore::open(&server.url).unwrap()),
        Limits::default(),
    );
    post_fighter(a, "aldric");
    let mut events = Events::open(a, "aldric");
    let mut next_event = || events.next();
    assert_eq!(next_event().0, "sheet");
    assert_eq!(set(b, "aldric", "hp.current", 1, json!(4)).0, 200);
    let (kind, changed) = next_event();
    assert_eq!(kind, "changed");
    assert_eq!(changed["revision"], 2);
    assert_eq!(changed["values"]["5e-srd-5.1:hp.current"]["value"], 4);
}

#[test]
fn accounts_and_tokens_are_kept_in_postgres_and_a_service_with_them_asks_for_them() {
    let Some(server) = Postgres::start("accounts") else {
        return;
    };
    let store = PostgresStore::open(&server.url).unwrap();
    accounts::put_user(&store, "gm", Role::Gamemaster, Some("correct horse")).unwrap();
    accounts::put_user(&store, "pat", Role::Player, Some("battery staple")).unwrap();
    assert_eq!(store.accounts().unwrap().len(), 2);
    let (token, label) = accounts::issue_token(&store, "pat", None).unwrap();
    let who = accounts::who_by_secret(&store, "token", &token)
        .unwrap()
        .unwrap();
    assert_eq!(who.name.as_deref(), Some("pat"));
    assert!(
        accounts::log_in(&store, "pat", "battery staple")
            .unwrap()
            .is_some()
    );
    assert!(
        accounts::log_in(&store, "pat", "battery stapler")
            .unwrap()
            .is_none()
    );
    let addr = start_on(Box::new(store), Limits::default());
    let (status, answer) = request(addr, "GET", "/api/characters", None);
    assert_eq!((status, codes(&answer)), (401, vec!["unauthenticated"]));
    let (status, answer) = request_as(addr, &token, "GET", "/api/characters", None);
    assert_eq!((status, answer), (200, json!([])));
    let store = PostgresStore::open(&server.url).unwrap();
    assert_eq!(store.remove_credential("token", &label), Ok(1));
    let (status, _) = request_as(addr, &token, "GET", "/api/characters", None);
    assert_eq!(status, 401);
}

#[test]
fn postgres_keeps_each_write_in_the_history_with_its_author_within_the_bound() {
    use ocf_service::store::{Keep, Note};
    let Some(server) = Postgres::start("history") else {
        return;
    };
    let store = PostgresStore::open(&server.url).unwrap();
    let note = |author: &str, what: &str| Note {
        author: Some(author.to_owned()),
        what: what.to_owned(),
        keep: Keep {
            count: 2,
            max_age: None,
        },
    };
    assert_eq!(
        store.create_noted("pc", "{}", None, &note("gm", "created")),
        Ok(1)
    );
    assert_eq!(
        store.save_noted("pc", 1, "{\"a\":1}", &note("ann", "one")),
        Ok(2)
    );
    // A refused write makes no revision.
    assert!(
        store
            .save_noted("pc", 1, "{}", &note("bob", "late"))
            .is_err()
    );
    assert_eq!(
        store.save_noted("pc", 2, "{\"a\":2}", &note("bob", "two")),
        Ok(3)
    );
    let kept: Vec<(u64, Option<String>, String)> = store
        .history("pc")
        .unwrap()
        .into_iter()
        .map(|r| (r.revision, r.author, r.what))
        .collect();
    assert_eq!(
        kept,
        [
            (3, Some("bob".to_owned()), "two".to_owned()),
            (2, Some("ann".to_owned()), "one".to_owned())
        ]
    );
    assert_eq!(
        store.load_revision("pc", 2).unwrap().unwrap().body,
        "{\"a\":1}"
    );
    assert_eq!(store.load_revision("pc", 1).unwrap(), None);
    assert_eq!(store.delete("pc"), Ok(true));
    assert!(store.history("pc").unwrap().is_empty());
}

/// The listener of another instance's writes (PostgreSQL's `LISTEN`) wakes once per quiet tick,
/// not in a loop (its wait used to run out once and then answer at once, flooding the service's
/// blocking threads with catch-ups until no request was answered: the two-instance load's
/// failure), and connects again when the server cuts its connection, hearing the writes after.
#[test]
fn the_listener_waits_a_tick_between_catch_ups_and_comes_back_after_a_cut() {
    let Some(server) = Postgres::start("listener") else {
        return;
    };
    let tick = std::time::Duration::from_millis(100);
    let store = PostgresStore::open(&server.url)
        .unwrap()
        .with_listen_tick(tick);
    let (tx, rx) = std::sync::mpsc::channel::<Option<String>>();
    let listening = store
        .listen(Box::new(move |id| tx.send(id.map(str::to_owned)).is_ok()))
        .unwrap();
    assert!(listening);
    std::thread::sleep(tick * 10);
    let quiet = rx.try_iter().count();
    assert!(
        (1..=12).contains(&quiet),
        "{quiet} catch-ups in ten ticks with nothing written"
    );

    // The server ends the listener's session: it connects again and hears the next writes.
    let mut admin = postgres::Client::connect(&server.url, postgres::NoTls).unwrap();
    let cut = admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap();
    assert_eq!(cut, 1);
    let writer = PostgresStore::open(&server.url).unwrap();
    assert_eq!(writer.create("pc", "{}", None), Ok(1));
    let started = std::time::Instant::now();
    let mut revision = 1;
    let heard = loop {
        revision = writer.save("pc", revision, "{}").unwrap();
        let told: Vec<Option<String>> = rx.try_iter().collect();
        if told.iter().any(|id| id.as_deref() == Some("pc")) {
            break true;
        }
        if started.elapsed() > std::time::Duration::from_secs(20) {
            break false;
        }
        std::thread::sleep(tick * 2);
    };
    assert!(
        heard,
        "no write heard after the listener's connection was cut"
    );
}
