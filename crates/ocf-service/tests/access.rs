//! Accounts, roles, signed states and the cross-site checks, over loopback as an app and an attacker
//! would use them: every role against every route (allowed and refused), forged, foreign and stale
//! states, a cross-origin form post, a foreign `Host`, and each refusal issue 39 lists.

mod support;

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ocf_service::Limits;
use ocf_service::accounts::{self, Role};
use ocf_service::store::{SqliteStore, Store};
use serde_json::{Value, json};
use support::*;

struct Table {
    addr: SocketAddr,
    gm: String,
    pat: String,
    ola: String,
    obs: String,
}

/// A store with a gamemaster, two players and an observer (a token each), three characters —
/// `pats` (Pat's), `olas` (Ola's, shared) and `secret` (the gamemaster's) — and a service on it.
fn table(name: &str, settings: ocf_service::Settings) -> (Table, std::path::PathBuf) {
    let dir = temp_dir(name);
    let db = dir.join("store.sqlite3");
    let store = SqliteStore::open(db.to_str().unwrap()).unwrap();
    let mut tokens = Vec::new();
    for (user, role) in [
        ("gm", Role::Gamemaster),
        ("pat", Role::Player),
        ("ola", Role::Player),
        ("obs", Role::Observer),
    ] {
        accounts::put_user(&store, user, role, Some("correct horse")).unwrap();
        tokens.push(accounts::issue_token(&store, user, None).unwrap().0);
    }
    let addr = start_with(Box::new(store), Limits::default(), settings);
    let table = Table {
        addr,
        gm: tokens[0].clone(),
        pat: tokens[1].clone(),
        ola: tokens[2].clone(),
        obs: tokens[3].clone(),
    };
    let fighter =
        std::fs::read_to_string(repo().join("testdata/characters/fighter-5.yaml")).unwrap();
    for (id, owner) in [
        ("pats", Some("pat")),
        ("olas", Some("ola")),
        ("secret", None),
    ] {
        let body = json!({ "id": id, "character": fighter, "owner": owner }).to_string();
        let (status, answer) = request_as(addr, &table.gm, "POST", "/api/characters", Some(&body));
        assert_eq!(status, 200, "{answer}");
    }
    let body = json!({ "owner": "ola", "shared": true }).to_string();
    let (status, answer) = request_as(
        addr,
        &table.gm,
        "PUT",
        "/api/characters/olas/ownership",
        Some(&body),
    );
    assert_eq!(status, 200, "{answer}");
    (table, db)
}

fn revision_of(t: &Table, id: &str) -> u64 {
    let (status, file) = request_as(t.addr, &t.gm, "GET", &format!("/api/characters/{id}"), None);
    assert_eq!(status, 200, "{file}");
    file["revision"].as_u64().unwrap()
}

/// A paused longsword attack on `id`, its dice paused, started by the gamemaster: the signed state.
fn paused_state(t: &Table, id: &str) -> String {
    let start = json!({
        "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" },
        "participants": { "target": [{ "id": "goblin", "values": { "5e-srd-5.1:combat.ac": 15 } }] },
        "policy": { "dice": "pause" },
    });
    let (status, paused) = request_as(
        t.addr,
        &t.gm,
        "POST",
        &format!("/api/characters/{id}/actions"),
        Some(&start.to_string()),
    );
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["result"]["status"], "paused", "{paused}");
    paused["result"]["state"].as_str().unwrap().to_owned()
}

#[test]
fn every_role_against_every_route() {
    let (t, _) = table("roles", ocf_service::Settings::new());
    let fighter =
        std::fs::read_to_string(repo().join("testdata/characters/fighter-5.yaml")).unwrap();
    let character: Value = serde_json::from_str(
        &serde_json::to_string(&serde_yaml::from_str::<Value>(&fighter).unwrap()).unwrap(),
    )
    .unwrap();
    // Who reads and who writes each character.
    let reads = |who: &str, id: &str| match who {
        "gm" => true,
        "pat" => id == "pats" || id == "olas",
        "ola" => id == "olas",
        "obs" => id == "olas",
        _ => false,
    };
    let writes = |who: &str, id: &str| match who {
        "gm" => true,
        "pat" => id == "pats",
        "ola" => id == "olas",
        _ => false,
    };
    let users = [
        ("gm", &t.gm),
        ("pat", &t.pat),
        ("ola", &t.ola),
        ("obs", &t.obs),
    ];

    // The list: each sees what they may read.
    for (who, token) in users {
        let (status, list) = request_as(t.addr, token, "GET", "/api/characters", None);
        assert_eq!(status, 200, "{who}: {list}");
        let ids: Vec<&str> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        let expected: Vec<&str> = ["olas", "pats", "secret"]
            .into_iter()
            .filter(|id| reads(who, id))
            .collect();
        assert_eq!(ids, expected, "{who}");
    }

    // Reads and writes on each character, by each role.
    for id in ["pats", "olas", "secret"] {
        for (who, token) in users {
            let expect = |write: bool| -> u16 {
                if if write {
                    writes(who, id)
                } else {
                    reads(who, id)
                } {
                    200
                } else if reads(who, id) {
                    403
                } else {
                    404
                }
            };
            let base = format!("/api/characters/{id}");
            let state = paused_state(&t, id);
            let revision = revision_of(&t, id);
            let calls: Vec<(&str, String, Option<String>, bool)> = vec![
                ("GET", base.clone(), None, false),
                ("GET", format!("{base}/sheet"), None, false),
                ("GET", format!("{base}/fields/hp.current"), None, false),
                (
                    "POST",
                    format!("{base}/options"),
                    Some(json!({ "path": { "entry": "fighter", "choice": ["features.fighter.fighting-style/style"] } }).to_string()),
                    false,
                ),
                (
                    "POST",
                    format!("{base}/actions/continue"),
                    Some(json!({ "state": state, "answer": { "faces": [12] } }).to_string()),
                    true,
                ),
                (
                    "POST",
                    format!("{base}/actions"),
                    Some(json!({ "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" },
                        "participants": { "target": [{ "id": "goblin", "values": { "5e-srd-5.1:combat.ac": 15 } }] } }).to_string()),
                    true,
                ),
                (
                    "PUT",
                    format!("{base}/values/hp.current"),
                    Some(json!({ "revision": revision, "value": 40 }).to_string()),
                    true,
                ),
                (
                    "POST",
                    format!("{base}/changes"),
                    Some(json!({ "revision": revision + u64::from(writes(who, id)),
                        "changes": [{ "type": "adjust", "field": "hp.current", "by": "-1" }] }).to_string()),
                    true,
                ),
                (
                    "PUT",
                    base.clone(),
                    Some(json!({ "revision": revision + 2 * u64::from(writes(who, id)), "character": character }).to_string()),
                    true,
                ),
                ("POST", format!("{base}/close"), None, false),
            ];
            for (method, path, body, write) in calls {
                let (status, answer) = request_as(t.addr, token, method, &path, body.as_deref());
                assert_eq!(status, expect(write), "{who} {method} {path}: {answer}");
                match status {
                    403 => assert_eq!(codes(&answer), vec!["forbidden"], "{answer}"),
                    404 => assert_eq!(codes(&answer), vec!["not-found"], "{answer}"),
                    _ => {}
                }
            }
            // Server-sent events: a reader gets the stream, others the refusal.
            let bearer = format!("Bearer {token}");
            let (status, _, _) = head_only(t.addr, &format!("{base}/events"), &bearer);
            assert_eq!(status, expect(false), "{who} events of {id}");
            // Ownership is the gamemaster's.
            let body = json!({ "owner": if id == "secret" { Value::Null } else { json!(&id[..3]) }, "shared": id == "olas" }).to_string();
            let (status, answer) = request_as(
                t.addr,
                token,
                "PUT",
                &format!("{base}/ownership"),
                Some(&body),
            );
            let owner_expected = if who == "gm" {
                200
            } else if reads(who, id) {
                403
            } else {
                404
            };
            assert_eq!(status, owner_expected, "{who} ownership of {id}: {answer}");
        }
    }

    // Creating: the gamemaster and players, not observers; a player's character is theirs.
    let create = |token: &str, id: &str, owner: Option<&str>| {
        let mut body = json!({ "id": id, "character": fighter });
        if let Some(owner) = owner {
            body["owner"] = json!(owner);
        }
        request_as(
            t.addr,
            token,
            "POST",
            "/api/characters",
            Some(&body.to_string()),
        )
    };
    assert_eq!(create(&t.gm, "gm-made", Some("ola")).0, 200);
    assert_eq!(create(&t.pat, "pat-made", None).0, 200);
    let (status, answer) = create(&t.pat, "pat-gives", Some("ola"));
    assert_eq!(
        (status, codes(&answer)),
        (403, vec!["forbidden"]),
        "{answer}"
    );
    let (status, answer) = create(&t.obs, "obs-made", None);
    assert_eq!(
        (status, codes(&answer)),
        (403, vec!["forbidden"]),
        "{answer}"
    );
    let (status, answer) = create(&t.gm, "nobodys", Some("nobody"));
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["unknown-user"]),
        "{answer}"
    );
    let (_, list) = request_as(t.addr, &t.pat, "GET", "/api/characters", None);
    let mine = list
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "pat-made")
        .unwrap();
    assert_eq!(mine["owner"], "pat");
    let (_, list) = request_as(t.addr, &t.ola, "GET", "/api/characters", None);
    assert!(
        list.as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "gm-made"),
        "{list}"
    );

    // Deleting: the owner or the gamemaster.
    let (status, _) = request_as(t.addr, &t.ola, "DELETE", "/api/characters/pat-made", None);
    assert_eq!(status, 404);
    let (status, _) = request_as(t.addr, &t.obs, "DELETE", "/api/characters/olas", None);
    assert_eq!(status, 403);
    let (status, answer) = request_as(t.addr, &t.pat, "DELETE", "/api/characters/pat-made", None);
    assert_eq!(status, 200, "{answer}");
    let (status, _) = request_as(t.addr, &t.gm, "DELETE", "/api/characters/gm-made", None);
    assert_eq!(status, 200);
    let (status, _) = request_as(t.addr, &t.gm, "GET", "/api/characters/gm-made", None);
    assert_eq!(status, 404);

    // Nobody logged in: every API route but the login is `unauthenticated`; the page is served.
    for (method, path) in [
        ("GET", "/api/characters"),
        ("GET", "/api/characters/olas/sheet"),
        ("GET", "/api/me"),
        ("POST", "/api/characters/olas/close"),
    ] {
        let (status, _, answer) = raw(t.addr, method, path, &[("Host", "127.0.0.1")], None);
        assert_eq!(
            (status, codes(&answer)),
            (401, vec!["unauthenticated"]),
            "{path}"
        );
    }
    let (status, answer) = request_as(t.addr, "ocf_not-a-token", "GET", "/api/characters", None);
    assert_eq!(
        (status, codes(&answer)),
        (401, vec!["unauthenticated"]),
        "{answer}"
    );
    let (status, _, page) = raw(t.addr, "GET", "/", &[("Host", "127.0.0.1")], None);
    assert_eq!(status, 200);
    assert!(page.as_str().unwrap().contains("id=\"login\""));
}

/// The status of a request whose answer may be an endless stream: only the status line is read.
fn head_only(addr: SocketAddr, path: &str, authorization: &str) -> (u16, (), ()) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {authorization}\r\n\r\n"
    )
    .unwrap();
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        stream.read_exact(&mut byte).unwrap();
        line.push(byte[0]);
    }
    let line = String::from_utf8(line).unwrap();
    (line.split(' ').nth(1).unwrap().parse().unwrap(), (), ())
}

#[test]
fn forged_foreign_and_stale_states_are_refused() {
    let (t, _) = table("states", ocf_service::Settings::new());
    let continue_with = |id: &str, state: Value, faces: Value| {
        let body = json!({ "state": state, "answer": { "faces": faces } }).to_string();
        request_as(
            t.addr,
            &t.gm,
            "POST",
            &format!("/api/characters/{id}/actions/continue"),
            Some(&body),
        )
    };

    // The signed state continues as it was handed out.
    let state = paused_state(&t, "pats");
    let (status, next) = continue_with("pats", json!(state), json!([12]));
    assert_eq!(status, 200, "{next}");

    // Forged: the engine's faces put in the payload, the old signature kept.
    let (payload, tag) = state.rsplit_once('.').unwrap();
    let mut inner: Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(payload.strip_prefix("v1.").unwrap())
            .unwrap(),
    )
    .unwrap();
    inner["state"]["rolled"] = json!([20]);
    inner["state"]["input"]["participants"]["target"][0]["values"]["5e-srd-5.1:combat.ac"] =
        json!(1);
    let forged = format!("v1.{}.{tag}", URL_SAFE_NO_PAD.encode(inner.to_string()));
    let (status, answer) = continue_with("pats", json!(forged), json!([12]));
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["invalid-state"]),
        "{answer}"
    );
    assert_eq!(answer["errors"][0]["path"], "/state");
    // The engine's plain state, as clients posted it before (no start needed): refused.
    let (status, answer) = continue_with("pats", inner["state"].clone(), json!([12]));
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["invalid-state"]),
        "{answer}"
    );
    // A signature cut off.
    let (status, answer) = continue_with("pats", json!(payload), json!([12]));
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["invalid-state"]),
        "{answer}"
    );

    // Foreign: Pat's state continued on Ola's character.
    let (status, answer) = continue_with("olas", json!(state), json!([12]));
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["foreign-state"]),
        "{answer}"
    );
    assert_eq!(answer["errors"][0]["data"]["character"], "pats");

    // Stale: the character changed after the pause.
    let state = paused_state(&t, "pats");
    let revision = revision_of(&t, "pats");
    let body = json!({ "revision": revision, "value": 30 }).to_string();
    let (status, _) = request_as(
        t.addr,
        &t.gm,
        "PUT",
        "/api/characters/pats/values/hp.current",
        Some(&body),
    );
    assert_eq!(status, 200);
    let (status, answer) = continue_with("pats", json!(state), json!([12]));
    assert_eq!(
        (status, codes(&answer)),
        (409, vec!["stale-state"]),
        "{answer}"
    );
    assert_eq!(answer["errors"][0]["data"]["revision"], revision + 1);

    // A player's action is rolled by the service: no dice pause, no seed.
    let attack = json!({
        "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" },
        "participants": { "target": [{ "id": "goblin", "values": { "5e-srd-5.1:combat.ac": 15 } }] },
    });
    let (status, done) = request_as(
        t.addr,
        &t.pat,
        "POST",
        "/api/characters/pats/actions",
        Some(&attack.to_string()),
    );
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["result"]["status"], "finished", "{done}");
    for (key, value, at) in [
        ("policy", json!({ "dice": "pause" }), "/policy"),
        (
            "policy",
            json!({ "rules": [{ "tags": ["attack"], "then": "pause" }] }),
            "/policy",
        ),
        ("seed", json!(7), "/seed"),
        ("answers", json!([{ "faces": [20] }]), "/answers/0"),
    ] {
        let mut body = attack.clone();
        body[key] = value;
        let (status, answer) = request_as(
            t.addr,
            &t.pat,
            "POST",
            "/api/characters/pats/actions",
            Some(&body.to_string()),
        );
        assert_eq!(
            (status, codes(&answer)),
            (403, vec!["forbidden"]),
            "{answer}"
        );
        assert_eq!(answer["errors"][0]["path"], at);
    }
}

#[test]
fn a_table_that_rolls_its_own_dice_lets_players_answer_dice_pauses() {
    let settings = ocf_service::Settings {
        player_dice: true,
        ..ocf_service::Settings::new()
    };
    let (t, _) = table("own-dice", settings);
    let start = json!({
        "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" },
        "participants": { "target": [{ "id": "goblin", "values": { "5e-srd-5.1:combat.ac": 15 } }] },
        "policy": { "dice": "pause" },
    });
    let (status, paused) = request_as(
        t.addr,
        &t.pat,
        "POST",
        "/api/characters/pats/actions",
        Some(&start.to_string()),
    );
    assert_eq!(status, 200, "{paused}");
    let mut state = paused["result"]["state"].clone();
    let mut last = Value::Null;
    for faces in [json!([20]), json!([3, 8])] {
        let body = json!({ "state": state, "answer": { "faces": faces } }).to_string();
        let (status, next) = request_as(
            t.addr,
            &t.pat,
            "POST",
            "/api/characters/pats/actions/continue",
            Some(&body),
        );
        assert_eq!(status, 200, "{next}");
        state = next["result"]["state"].clone();
        last = next;
    }
    assert_eq!(last["result"]["outcome"]["result"], "critical", "{last}");
    // An answer that is not what the pause asks for is the engine's `answer-mismatch`.
    let state = paused["result"]["state"].clone();
    let body = json!({ "state": state, "answer": { "option": "x" } }).to_string();
    let (status, answer) = request_as(
        t.addr,
        &t.pat,
        "POST",
        "/api/characters/pats/actions/continue",
        Some(&body),
    );
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["answer-mismatch"]),
        "{answer}"
    );
}

#[test]
fn cross_site_writes_and_foreign_hosts_are_refused_and_cors_stays_closed() {
    let (t, _) = table("cross-site", ocf_service::Settings::new());
    let own = format!("http://{}", t.addr);
    let bearer = format!("Bearer {}", t.gm);
    let revision = revision_of(&t, "pats").to_string();
    let path = "/api/characters/pats/values/hp.current";

    // A form on another site posting the hit points: its origin is refused...
    let form = format!("revision={revision}&value=1");
    let (status, _, answer) = raw(
        t.addr,
        "PUT",
        path,
        &[
            ("Host", "127.0.0.1"),
            ("Origin", "http://evil.example"),
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Authorization", &bearer),
        ],
        Some(&form),
    );
    assert_eq!(
        (status, codes(&answer)),
        (403, vec!["forbidden-origin"]),
        "{answer}"
    );
    // ...and so is its content type, wherever it comes from (a form can't send JSON's).
    for kind in [
        "application/x-www-form-urlencoded",
        "text/plain",
        "multipart/form-data; boundary=x",
    ] {
        let (status, _, answer) = raw(
            t.addr,
            "POST",
            "/api/characters/pats/changes",
            &[
                ("Host", "127.0.0.1"),
                ("Content-Type", kind),
                ("Authorization", &bearer),
            ],
            Some(&json!({ "revision": 1, "changes": [] }).to_string()),
        );
        assert_eq!(
            (status, codes(&answer)),
            (415, vec!["unsupported-media-type"]),
            "{kind}"
        );
    }
    let (status, _, answer) = raw(
        t.addr,
        "POST",
        "/api/characters/pats/close",
        &[("Host", "127.0.0.1"), ("Authorization", &bearer)],
        Some("x"),
    );
    assert_eq!(
        (status, codes(&answer)),
        (415, vec!["unsupported-media-type"]),
        "{answer}"
    );
    // The page's own origin writes.
    let (status, _, answer) = raw(
        t.addr,
        "PUT",
        path,
        &[
            ("Host", &t.addr.to_string()),
            ("Origin", &own),
            ("Content-Type", "application/json"),
            ("Authorization", &bearer),
        ],
        Some(&json!({ "revision": revision.parse::<u64>().unwrap(), "value": 40 }).to_string()),
    );
    assert_eq!(status, 200, "{answer}");

    // DNS rebinding: a name the attacker points at 127.0.0.1 reads and writes nothing.
    for (method, body) in [
        ("GET", None),
        (
            "PUT",
            Some(json!({ "revision": 1, "value": 1 }).to_string()),
        ),
    ] {
        let (status, _, answer) = raw(
            t.addr,
            method,
            path.replace("values/", "fields/").as_str(),
            &[
                ("Host", &format!("rebind.evil.example:{}", t.addr.port())),
                ("Content-Type", "application/json"),
                ("Authorization", &bearer),
            ],
            body.as_deref(),
        );
        assert_eq!(
            (status, codes(&answer)),
            (421, vec!["forbidden-host"]),
            "{method} {answer}"
        );
    }
    let (status, _, answer) = raw(t.addr, "GET", "/", &[("Host", "evil.example")], None);
    assert_eq!(status, 421, "{answer}");
    let (status, _, _) = raw(t.addr, "GET", "/", &[("Host", "localhost:1")], None);
    assert_eq!(status, 200);

    // CORS is closed: a preflight or a cross-origin read gets no `Access-Control-Allow-*` header.
    let (_, headers, _) = raw(
        t.addr,
        "OPTIONS",
        "/api/characters",
        &[
            ("Host", "127.0.0.1"),
            ("Origin", "http://evil.example"),
            ("Access-Control-Request-Method", "PUT"),
        ],
        None,
    );
    assert!(
        !headers
            .iter()
            .any(|(name, _)| name.starts_with("access-control-")),
        "{headers:?}"
    );
}

#[test]
fn cors_opens_only_to_the_configured_origin() {
    let settings = ocf_service::Settings {
        cors: vec!["https://vtt.example".into()],
        ..ocf_service::Settings::new()
    };
    let (t, _) = table("cors", settings);
    let preflight = |origin: &str| {
        raw(
            t.addr,
            "OPTIONS",
            "/api/characters",
            &[
                ("Host", "127.0.0.1"),
                ("Origin", origin),
                ("Access-Control-Request-Method", "GET"),
                ("Access-Control-Request-Headers", "authorization"),
            ],
            None,
        )
        .1
    };
    let allowed = |headers: &[(String, String)]| {
        headers
            .iter()
            .find(|(name, _)| name == "access-control-allow-origin")
            .map(|(_, value)| value.clone())
    };
    assert_eq!(
        allowed(&preflight("https://vtt.example")).as_deref(),
        Some("https://vtt.example")
    );
    assert_eq!(allowed(&preflight("https://evil.example")), None);
    let bearer = format!("Bearer {}", t.obs);
    let (status, _, list) = raw(
        t.addr,
        "GET",
        "/api/characters",
        &[
            ("Host", "127.0.0.1"),
            ("Origin", "https://vtt.example"),
            ("Authorization", &bearer),
        ],
        None,
    );
    assert_eq!(status, 200, "{list}");
}

#[test]
fn a_login_sets_a_secure_session_cookie_and_a_logout_ends_it() {
    let (t, _) = table("login", ocf_service::Settings::new());
    let login = |user: &str, password: &str| {
        raw(
            t.addr,
            "POST",
            "/api/login",
            &[("Host", "127.0.0.1"), ("Content-Type", "application/json")],
            Some(&json!({ "user": user, "password": password }).to_string()),
        )
    };
    for (user, password) in [("pat", "wrong horse"), ("nobody", "correct horse")] {
        let (status, _, answer) = login(user, password);
        assert_eq!(
            (status, codes(&answer)),
            (401, vec!["invalid-credentials"]),
            "{answer}"
        );
    }
    let (status, headers, answer) = login("pat", "correct horse");
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["role"], "player");
    let cookie = headers
        .iter()
        .find(|(name, _)| name == "set-cookie")
        .map(|(_, value)| value.clone())
        .unwrap();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    let pair = cookie.split(';').next().unwrap().to_owned();
    let with_cookie = |path: &str, method: &str| {
        raw(
            t.addr,
            method,
            path,
            &[
                ("Host", "127.0.0.1"),
                ("Cookie", &pair),
                ("Content-Type", "application/json"),
            ],
            None,
        )
    };
    let (status, _, me) = with_cookie("/api/me", "GET");
    assert_eq!((status, me["user"].clone()), (200, json!("pat")), "{me}");
    let (status, _, _) = with_cookie("/api/characters/secret", "GET");
    assert_eq!(status, 404);
    let (status, _, _) = with_cookie("/api/logout", "POST");
    assert_eq!(status, 200);
    let (status, _, _) = with_cookie("/api/me", "GET");
    assert_eq!(status, 401);
}

/// A rulesets that cannot load a character pinning the pack `gone`, as a service whose pack was
/// removed.
struct Gone;

impl ocf_service::rulesets::Rulesets for Gone {
    fn ruleset_for(
        &self,
        character: &ocf_model::Character,
    ) -> Result<(String, std::sync::Arc<ocf_model::Ruleset>), Vec<Value>> {
        if character.packs.iter().any(|p| p.id.as_str() == "gone") {
            return Err(vec![json!({
                "code": "missing-dependency", "message": "the pinned pack `gone` is not among the packs this service has",
                "path": "/packs/1"
            })]);
        }
        Ok(("packs".into(), ruleset()))
    }
}

#[test]
fn the_refusals_of_issue_39_are_right() {
    let dir = temp_dir("refusals");
    let db = dir.join("store.sqlite3");
    let store = SqliteStore::open(db.to_str().unwrap()).unwrap();
    let app = ocf_service::App::new(
        Box::new(Gone),
        Box::new(store),
        Limits {
            max_open: 1,
            ..Limits::default()
        },
    );
    let settings = ocf_service::Settings {
        header_timeout: Duration::from_secs(1),
        ..ocf_service::Settings::new()
    };
    let addr = start_app(app, settings);
    post_fighter(addr, "aldric");

    // A stored file that no longer loads (its pack gone) is read, replaced and deleted.
    let (_, file) = request(addr, "GET", "/api/characters/aldric", None);
    let mut broken = file["character"].clone();
    broken["packs"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "id": "gone", "version": "1.0.0" }));
    let body = json!({ "revision": 1, "character": broken }).to_string();
    let (status, answer) = request(addr, "PUT", "/api/characters/aldric", Some(&body));
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["missing-dependency"]),
        "{answer}"
    );
    // The pack goes away under a stored file: written behind the service's back.
    let other = SqliteStore::open(db.to_str().unwrap()).unwrap();
    assert_eq!(other.save("aldric", 1, &broken.to_string()), Ok(2));
    let (status, answer) = request(addr, "GET", "/api/characters/aldric/sheet", None);
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["missing-dependency"]),
        "{answer}"
    );
    let (status, read) = request(addr, "GET", "/api/characters/aldric", None);
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["revision"], 2);
    let body = json!({ "revision": 2, "character": file["character"] }).to_string();
    let (status, answer) = request(addr, "PUT", "/api/characters/aldric", Some(&body));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["revision"], 3);
    let (status, sheet) = request(addr, "GET", "/api/characters/aldric/sheet", None);
    assert_eq!(status, 200, "{sheet}");
    assert_eq!(other.save("aldric", 3, &broken.to_string()), Ok(4));
    let (status, answer) = request(addr, "DELETE", "/api/characters/aldric", None);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(request(addr, "GET", "/api/characters/aldric", None).0, 404);

    // A create refused `too-many-open` stores nothing: the retry is not `duplicate-id`.
    post_fighter(addr, "watched");
    let mut watcher = std::net::TcpStream::connect(addr).unwrap();
    write!(
        watcher,
        "GET /api/characters/watched/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    )
    .unwrap();
    let mut first = [0u8; 12];
    watcher.read_exact(&mut first).unwrap();
    let text = std::fs::read_to_string(repo().join("testdata/characters/fighter-5.yaml")).unwrap();
    let body = json!({ "id": "second", "character": text }).to_string();
    let (status, answer) = request(addr, "POST", "/api/characters", Some(&body));
    assert_eq!(
        (status, codes(&answer)),
        (503, vec!["too-many-open"]),
        "{answer}"
    );
    assert_eq!(request(addr, "GET", "/api/characters/second", None).0, 404);
    drop(watcher);
    let started = Instant::now();
    loop {
        let (status, answer) = request(addr, "POST", "/api/characters", Some(&body));
        if status == 200 {
            break;
        }
        assert_eq!(codes(&answer), vec!["too-many-open"], "{answer}");
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "the watcher never left"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // A method a route doesn't take: 405 in the error shape.
    let (status, answer) = request(addr, "PATCH", "/api/characters", Some("{}"));
    assert_eq!(
        (status, codes(&answer)),
        (405, vec!["method-not-allowed"]),
        "{answer}"
    );

    // IDs: dot segments, look-alikes and the length counted in characters.
    for id in [
        "..",
        ".",
        "a\u{200B}b",
        "\u{202E}cipa",
        "a b",
        "a?b",
        "a%2Fb",
        "a\\b",
        "\u{FEFF}x",
    ] {
        let body = json!({ "id": id, "character": text }).to_string();
        let (status, answer) = request(addr, "POST", "/api/characters", Some(&body));
        assert_eq!(
            (status, codes(&answer)),
            (400, vec!["invalid-id"]),
            "{id:?}: {answer}"
        );
    }
    let long = "é".repeat(200);
    let body = json!({ "id": long, "character": text }).to_string();
    let (status, answer) = request(addr, "POST", "/api/characters", Some(&body));
    assert_eq!(status, 200, "{answer}");
    let body = json!({ "id": "é".repeat(201), "character": text }).to_string();
    let (status, answer) = request(addr, "POST", "/api/characters", Some(&body));
    assert_eq!(
        (status, codes(&answer)),
        (400, vec!["invalid-id"]),
        "{answer}"
    );
    assert!(
        answer["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("200 characters")
    );

    // A refused edit's message says it was refused, not what a read file would do.
    let (status, answer) = set(addr, "second", "hp.current", 1, json!("lots"));
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["wrong-type"]),
        "{answer}"
    );
    let message = answer["errors"][0]["message"].as_str().unwrap();
    assert!(!message.contains("default is used"), "{message}");
    assert!(message.contains("refused"), "{message}");

    // A half-open connection (headers never finished) is closed.
    let mut idle = std::net::TcpStream::connect(addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(idle, "GET /api/characters HTTP/1.1\r\nHost: 127.0.0.1\r\n").unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    let read = idle.read_to_end(&mut rest);
    assert!(read.is_ok(), "{read:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn an_event_stream_outlives_the_header_timeout() {
    let dir = temp_dir("long-events");
    let store = SqliteStore::open(dir.join("store.sqlite3").to_str().unwrap()).unwrap();
    let settings = ocf_service::Settings {
        header_timeout: Duration::from_secs(1),
        ..ocf_service::Settings::new()
    };
    let addr = start_with(Box::new(store), Limits::default(), settings);
    post_fighter(addr, "aldric");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET /api/characters/aldric/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    )
    .unwrap();
    // An idle connection that sends nothing is closed.
    let mut idle = std::net::TcpStream::connect(addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let started = Instant::now();
    assert!(idle.read_to_end(&mut Vec::new()).is_ok());
    assert!(started.elapsed() < Duration::from_secs(10));
    // The stream is still there past the header timeout: an edit arrives on it.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(set(addr, "aldric", "hp.current", 1, json!(9)).0, 200);
    let mut seen = String::new();
    let mut buffer = [0u8; 4096];
    while !seen.contains("event: changed") {
        let n = stream.read(&mut buffer).unwrap();
        assert!(n > 0, "the stream ended: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
    }
}
