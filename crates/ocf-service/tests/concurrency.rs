//! Requests on different characters never wait for each other: while one character is held by a
//! long request (here its open, stopped inside the ruleset lookup until the test lets it go),
//! another character is read, edited, listed and opened. With one lock over every character these
//! calls would wait for the held one, and the test would never end its checks.

mod support;

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};

use ocf_model::{Character, Ruleset};
use ocf_service::rulesets::Rulesets;
use ocf_service::store::SqliteStore;
use ocf_service::{App, Limits};
use serde_json::{Value, json};
use std::time::Duration;
use support::*;

/// The test's ruleset, but a character whose file's `id` is `held` stops in the lookup until the
/// gate opens, telling `entered` it is there.
struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
    entered: Mutex<mpsc::Sender<()>>,
}

impl Rulesets for Gate {
    fn ruleset_for(&self, character: &Character) -> Result<(String, Arc<Ruleset>), Vec<Value>> {
        if character.id == "held" {
            let _ = self.entered.lock().unwrap().send(());
            let mut open = self.open.lock().unwrap();
            while !*open {
                open = self.opened.wait(open).unwrap();
            }
        }
        Ok(("packs".to_owned(), ruleset()))
    }
}

fn fighter(id: &str) -> Character {
    let text = std::fs::read_to_string(repo().join("testdata/characters/fighter-5.yaml")).unwrap();
    let mut character = ocf_service::app::read_character(&Value::String(text), "").unwrap();
    character.id = id.to_owned();
    character
}

#[test]
fn a_character_held_by_a_long_request_holds_up_no_other() {
    let dir = temp_dir("concurrency");
    let store = SqliteStore::open(dir.join("store.sqlite3").to_str().unwrap()).unwrap();
    let (entered, inside) = mpsc::channel();
    let gate = Arc::new(Gate {
        open: Mutex::new(false),
        opened: Condvar::new(),
        entered: Mutex::new(entered),
    });
    struct Shared(Arc<Gate>);
    impl Rulesets for Shared {
        fn ruleset_for(&self, c: &Character) -> Result<(String, Arc<Ruleset>), Vec<Value>> {
            self.0.ruleset_for(c)
        }
    }
    let app = Arc::new(App::new(
        Box::new(Shared(gate.clone())),
        Box::new(store),
        Limits::default(),
    ));
    app.create(Some("free".into()), fighter("free"), None, None)
        .unwrap();
    // `held` is stored as it is (no lookup) and opened by its first read, which the gate stops.
    let body = serde_json::to_string(&fighter("held")).unwrap();
    app.store().create("held", &body, None).unwrap();
    let reader = {
        let app = app.clone();
        std::thread::spawn(move || app.sheet("held"))
    };
    inside.recv().unwrap();

    // `held` is held: everything on `free` goes on (were it to wait, the gate never opens and
    // the check below fails rather than hanging).
    let (finished, done) = mpsc::channel();
    {
        let app = app.clone();
        std::thread::spawn(move || {
            let sheet = app.sheet("free").unwrap();
            assert_eq!(sheet["revision"], 1);
            let edited = app
                .set_value("free", 1, "hp.current", Some(json!(7)), None)
                .unwrap();
            assert_eq!(edited["revision"], 2);
            let field = app.field("free", "hp.current").unwrap();
            assert_eq!(field["value"]["value"], 7);
            let (_, _events) = app.subscribe("free").unwrap();
            let listed = app.list(&ocf_service::accounts::Who::open()).unwrap();
            assert_eq!(listed.as_array().unwrap().len(), 2);
            app.create(Some("other".into()), fighter("other"), None, None)
                .unwrap();
            let _ = finished.send(());
        });
    }
    done.recv_timeout(Duration::from_secs(300))
        .expect("a request on another character waited for the held one");
    assert!(!reader.is_finished(), "the held read waits at the gate");

    *gate.open.lock().unwrap() = true;
    gate.opened.notify_all();
    let held = reader.join().unwrap().unwrap();
    assert_eq!(held["revision"], 1);
    // The held character, now open, took no edit of another.
    assert_eq!(
        app.sheet("held").unwrap()["sheet"]["values"]["5e-srd-5.1:hp.current"],
        held["sheet"]["values"]["5e-srd-5.1:hp.current"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
