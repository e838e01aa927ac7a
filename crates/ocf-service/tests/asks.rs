//! `POST /api/characters/{id}/asks`, `…/asks/answer` and `…/asks/withdraw` over loopback: an ask
//! is kept until answered or withdrawn, told to a page that opens on the asked character later
//! (and again to one that reconnects), answered once, its answer told to the asker's page that
//! opens later; bounded per character; a malformed one refused at its key. (The ask carried
//! between two open pages in a browser is `browser.rs`'s
//! `a_targets_save_that_pauses_is_made_on_the_targets_own_page`.) Also the list's names.

mod support;

use std::net::SocketAddr;

use ocf_service::Limits;
use serde_json::{Value, json};
use support::*;

/// A page subscribed to `id`'s events ([`Events`]).
struct Page(Events);

impl Page {
    fn open(addr: SocketAddr, id: &str) -> Page {
        Page(Events::open(addr, id))
    }

    fn next(&mut self) -> (String, Value) {
        self.0.next()
    }

    /// The events after `sheet` until the next event pushed by a write (`probe` makes one).
    fn told(&mut self, probe: impl FnOnce()) -> Vec<(String, Value)> {
        assert_eq!(self.next().0, "sheet");
        probe();
        let mut told = Vec::new();
        loop {
            let (kind, data) = self.next();
            if kind == "changed" {
                return told;
            }
            told.push((kind, data));
        }
    }
}

fn post(addr: SocketAddr, path: &str, body: &Value) -> (u16, Value) {
    request(addr, "POST", path, Some(&body.to_string()))
}

/// A write to `id` (its hit points), so that a page on it is told something after the asks.
fn touch(addr: SocketAddr, id: &str) {
    let (_, stored) = request(addr, "GET", &format!("/api/characters/{id}"), None);
    let revision = stored["revision"].as_u64().unwrap();
    let hp = 40 - revision as i64;
    assert_eq!(set(addr, id, "hp.current", revision, json!(hp)).0, 200);
}

#[test]
fn an_ask_is_kept_until_answered_told_to_a_page_opened_later_and_answered_once() {
    let dir = temp_dir("asks");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");
    post_fighter(addr, "brute");
    let run =
        json!({ "action": "5e-srd-5.1:saving-throw", "params": { "ability": "dex", "dc": 13 } });
    let ask = json!({ "from": "aldric", "key": "k1", "run": run });

    // No page is open on brute: the ask is kept.
    let (status, answer) = post(addr, "/api/characters/brute/asks", &ask);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({ "id": "brute", "asked": true, "watched": false })
    );
    let (status, answer) = post(addr, "/api/characters/brute/asks", &ask);
    assert_eq!((status, codes(&answer)), (409, vec!["duplicate-ask"]));
    assert_eq!(answer["errors"][0]["path"], "/key");

    // A page opened on brute later is told it, right after the sheet; one that opens again
    // (a reconnect) is told it again.
    let expected =
        json!({ "kind": "ask", "id": "brute", "from": "aldric", "key": "k1", "run": run });
    for _ in 0..2 {
        let told = Page::open(addr, "brute").told(|| touch(addr, "brute"));
        assert_eq!(told, vec![("ask".to_owned(), expected.clone())]);
    }

    // A page on aldric, open while brute's player answers, is told the answer at once.
    let mut aldric = Page::open(addr, "aldric");
    assert_eq!(aldric.next().0, "sheet");
    let outcome = json!({ "result": "failure", "data": {} });
    let reply = json!({ "to": "aldric", "key": "k1", "outcome": outcome });
    let (status, answer) = post(addr, "/api/characters/brute/asks/answer", &reply);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({ "id": "brute", "answered": true, "watched": true })
    );
    let answered = json!({ "kind": "answered", "id": "aldric", "from": "brute", "key": "k1", "outcome": outcome });
    assert_eq!(aldric.next(), ("answered".to_owned(), answered.clone()));

    // Answered once.
    let (status, answer) = post(addr, "/api/characters/brute/asks/answer", &reply);
    assert_eq!((status, codes(&answer)), (409, vec!["already-answered"]));
    assert_eq!(answer["errors"][0]["path"], "/key");

    // An answered ask is no longer told to brute's pages; its answer is told to an aldric page
    // that opens (the asker's page reconnecting) until aldric collects it.
    assert!(
        Page::open(addr, "brute")
            .told(|| touch(addr, "brute"))
            .is_empty()
    );
    let told = Page::open(addr, "aldric").told(|| touch(addr, "aldric"));
    assert_eq!(told, vec![("answered".to_owned(), answered)]);
    let collect = json!({ "from": "aldric", "key": "k1" });
    let (status, answer) = post(addr, "/api/characters/brute/asks/withdraw", &collect);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({ "id": "brute", "withdrawn": true, "answered": true })
    );
    assert!(
        Page::open(addr, "aldric")
            .told(|| touch(addr, "aldric"))
            .is_empty()
    );
    let (status, answer) = post(addr, "/api/characters/brute/asks/withdraw", &collect);
    assert_eq!((status, codes(&answer)), (404, vec!["unknown-ask"]));
    let (status, answer) = post(addr, "/api/characters/brute/asks/answer", &reply);
    assert_eq!((status, codes(&answer)), (404, vec!["unknown-ask"]));
    assert_eq!(answer["errors"][0]["path"], "/key");
}

#[test]
fn a_withdrawn_ask_is_taken_from_the_asked_page_and_asks_are_bounded() {
    let dir = temp_dir("asks-withdrawn");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");
    post_fighter(addr, "brute");
    let run =
        json!({ "action": "5e-srd-5.1:saving-throw", "params": { "ability": "con", "dc": 10 } });
    let mut brute = Page::open(addr, "brute");
    assert_eq!(brute.next().0, "sheet");
    let ask = json!({ "from": "aldric", "key": "w", "run": run });
    let (status, answer) = post(addr, "/api/characters/brute/asks", &ask);
    assert_eq!(
        (status, &answer["watched"]),
        (200, &json!(true)),
        "{answer}"
    );
    assert_eq!(brute.next().0, "ask");
    let (status, answer) = post(
        addr,
        "/api/characters/brute/asks/withdraw",
        &json!({ "from": "aldric", "key": "w" }),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["answered"], false);
    assert_eq!(
        brute.next(),
        (
            "withdrawn".to_owned(),
            json!({ "kind": "withdrawn", "id": "brute", "from": "aldric", "key": "w" })
        )
    );
    // Withdrawn, it can't be answered.
    let reply = json!({ "to": "aldric", "key": "w", "outcome": {} });
    let (status, answer) = post(addr, "/api/characters/brute/asks/answer", &reply);
    assert_eq!((status, codes(&answer)), (404, vec!["unknown-ask"]));

    // Sixteen unanswered asks are kept on brute; the seventeenth is refused until one is
    // answered, whose answer then makes room.
    let limit = ocf_service::asks::MAX_KEPT;
    for i in 0..limit {
        let ask = json!({ "from": "aldric", "key": format!("b{i}"), "run": run });
        assert_eq!(post(addr, "/api/characters/brute/asks", &ask).0, 200);
    }
    let more = json!({ "from": "aldric", "key": "more", "run": run });
    let (status, answer) = post(addr, "/api/characters/brute/asks", &more);
    assert_eq!((status, codes(&answer)), (409, vec!["too-many-asks"]));
    assert_eq!(answer["errors"][0]["path"], "/id");
    assert_eq!(answer["errors"][0]["data"]["limit"], limit);
    let reply = json!({ "to": "aldric", "key": "b0", "outcome": {} });
    assert_eq!(
        post(addr, "/api/characters/brute/asks/answer", &reply).0,
        200
    );
    assert_eq!(post(addr, "/api/characters/brute/asks", &more).0, 200);
    // The answer dropped to make room is no longer kept.
    let collect = json!({ "from": "aldric", "key": "b0" });
    let (status, answer) = post(addr, "/api/characters/brute/asks/withdraw", &collect);
    assert_eq!((status, codes(&answer)), (404, vec!["unknown-ask"]));

    // A deleted character's asks go with it.
    assert_eq!(
        request(addr, "DELETE", "/api/characters/brute", None).0,
        200
    );
    post_fighter(addr, "brute");
    assert_eq!(post(addr, "/api/characters/brute/asks", &more).0, 200);
}

#[test]
fn a_malformed_ask_is_refused_at_its_key() {
    let dir = temp_dir("asks-malformed");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");
    post_fighter(addr, "brute");
    let big = "x".repeat(ocf_service::asks::MAX_BYTES);
    for (route, body, status, code, path) in [
        (
            "asks",
            json!({ "from": "aldric", "key": "k" }),
            400,
            "invalid-request",
            "/run",
        ),
        (
            "asks",
            json!({ "from": 3, "key": "k", "run": {} }),
            400,
            "wrong-type",
            "/from",
        ),
        (
            "asks",
            json!({ "from": "aldric", "key": "k", "run": [] }),
            400,
            "wrong-type",
            "/run",
        ),
        (
            "asks",
            json!({ "from": "aldric", "key": "", "run": {} }),
            400,
            "invalid-request",
            "/key",
        ),
        (
            "asks",
            json!({ "from": "aldric", "key": "k".repeat(201), "run": {} }),
            400,
            "invalid-request",
            "/key",
        ),
        (
            "asks",
            json!({ "from": "aldric", "key": "k", "run": {}, "extra": 1 }),
            400,
            "invalid-request",
            "/extra",
        ),
        (
            "asks",
            json!({ "from": "aldric", "key": "k", "run": { "action": big } }),
            413,
            "payload-too-large",
            "/run",
        ),
        (
            "asks/answer",
            json!({ "to": "aldric", "key": "k", "outcome": 1 }),
            400,
            "wrong-type",
            "/outcome",
        ),
        (
            "asks/withdraw",
            json!({ "from": "aldric" }),
            400,
            "invalid-request",
            "/key",
        ),
    ] {
        let (got, answer) = post(addr, &format!("/api/characters/brute/{route}"), &body);
        assert_eq!(got, status, "{route} {body}: {answer}");
        assert_eq!(codes(&answer), [code], "{route} {body}");
        assert_eq!(answer["errors"][0]["path"], path, "{route} {body}");
    }
    let ask = json!({ "from": "aldric", "key": "k", "run": {} });
    assert_eq!(post(addr, "/api/characters/nobody/asks", &ask).0, 404);
    let ask = json!({ "from": "nobody", "key": "k", "run": {} });
    assert_eq!(post(addr, "/api/characters/brute/asks", &ask).0, 404);
}

#[test]
fn the_list_names_each_character_by_its_title_field() {
    let dir = temp_dir("asks-names");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");
    post_fighter(addr, "brute");
    let named = |list: &Value| -> Vec<(String, Value)> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|c| (c["id"].as_str().unwrap().to_owned(), c["name"].clone()))
            .collect()
    };
    let (_, list) = request(addr, "GET", "/api/characters", None);
    assert_eq!(
        named(&list),
        [
            ("aldric".into(), Value::Null),
            ("brute".into(), Value::Null)
        ]
    );
    // Named, then renamed: the list follows each write; a blank name is none.
    assert_eq!(
        set(addr, "aldric", "name", 1, json!("  Brother Aldric ")).0,
        200
    );
    let (_, list) = request(addr, "GET", "/api/characters", None);
    assert_eq!(named(&list)[0], ("aldric".into(), json!("Brother Aldric")));
    assert_eq!(set(addr, "aldric", "name", 2, json!("Aldric")).0, 200);
    assert_eq!(set(addr, "brute", "name", 1, json!("   ")).0, 200);
    let (_, list) = request(addr, "GET", "/api/characters", None);
    assert_eq!(
        named(&list),
        [
            ("aldric".into(), json!("Aldric")),
            ("brute".into(), Value::Null)
        ]
    );
}

#[test]
fn who_may_ask_answer_and_withdraw() {
    use ocf_service::accounts::{self, Role};
    let dir = temp_dir("asks-roles");
    let store =
        ocf_service::store::SqliteStore::open(dir.join("store.sqlite3").to_str().unwrap()).unwrap();
    let mut tokens = std::collections::HashMap::new();
    for (user, role) in [
        ("gm", Role::Gamemaster),
        ("pat", Role::Player),
        ("obs", Role::Observer),
    ] {
        accounts::put_user(&store, user, role, Some("correct horse")).unwrap();
        tokens.insert(user, accounts::issue_token(&store, user, None).unwrap().0);
    }
    let addr = start_with(
        Box::new(store),
        Limits::default(),
        ocf_service::Settings::new(),
    );
    let fighter =
        std::fs::read_to_string(repo().join("testdata/characters/fighter-5.yaml")).unwrap();
    // pat's own character, a monster every player sees (shared), and the gamemaster's secret.
    for (id, owner, shared) in [
        ("pats", Some("pat"), false),
        ("monster", None, true),
        ("secret", None, false),
    ] {
        let body = json!({ "id": id, "character": fighter, "owner": owner }).to_string();
        let (status, answer) =
            request_as(addr, &tokens["gm"], "POST", "/api/characters", Some(&body));
        assert_eq!(status, 200, "{answer}");
        let body = json!({ "owner": owner, "shared": shared }).to_string();
        let path = format!("/api/characters/{id}/ownership");
        assert_eq!(
            request_as(addr, &tokens["gm"], "PUT", &path, Some(&body)).0,
            200
        );
    }
    let call = |who: &str, path: &str, body: Value| -> (u16, Vec<String>) {
        let (status, answer) =
            request_as(addr, &tokens[who], "POST", path, Some(&body.to_string()));
        let codes = codes(&answer).into_iter().map(str::to_owned).collect();
        (status, codes)
    };
    let run = json!({ "action": "5e-srd-5.1:saving-throw" });
    let ask = |from: &str, key: &str| json!({ "from": from, "key": key, "run": run });
    // The asker writes `from` and reads the asked character.
    assert_eq!(
        call("pat", "/api/characters/monster/asks", ask("pats", "k")).0,
        200
    );
    assert_eq!(
        call("pat", "/api/characters/secret/asks", ask("pats", "k")),
        (404, vec!["not-found".to_owned()])
    );
    assert_eq!(
        call("pat", "/api/characters/pats/asks", ask("monster", "k")),
        (403, vec!["forbidden".to_owned()])
    );
    assert_eq!(
        call("obs", "/api/characters/monster/asks", ask("monster", "o")),
        (403, vec!["forbidden".to_owned()])
    );
    // The answerer writes the asked character and reads the asker: the gamemaster for the
    // monster; not pat, nor the observer.
    let reply = json!({ "to": "pats", "key": "k", "outcome": {} });
    for who in ["pat", "obs"] {
        assert_eq!(
            call(who, "/api/characters/monster/asks/answer", reply.clone()),
            (403, vec!["forbidden".to_owned()]),
            "{who}"
        );
    }
    // Only the asker's writer withdraws.
    let collect = json!({ "from": "pats", "key": "k" });
    assert_eq!(
        call(
            "obs",
            "/api/characters/monster/asks/withdraw",
            collect.clone()
        )
        .0,
        404,
        "the observer does not see pats"
    );
    assert_eq!(
        call("gm", "/api/characters/monster/asks/answer", reply).0,
        200
    );
    assert_eq!(
        call("pat", "/api/characters/monster/asks/withdraw", collect),
        (200, vec![])
    );
}
