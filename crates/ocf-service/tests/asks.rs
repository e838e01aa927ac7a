//! `POST /api/characters/{id}/asks` and `…/asks/answer` over loopback: a roll asked of a page no
//! one has open is `not-watched`, and a malformed ask is refused at its key. (The ask carried
//! between two open pages is the browser test's
//! `a_targets_save_that_pauses_is_made_on_the_targets_own_page`.)

mod support;

use ocf_service::Limits;
use serde_json::json;
use support::*;

#[test]
fn an_ask_no_page_hears_is_not_watched_and_a_malformed_one_is_refused() {
    let dir = temp_dir("asks");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");
    post_fighter(addr, "brute");
    let run =
        json!({ "action": "5e-srd-5.1:saving-throw", "params": { "ability": "dex", "dc": 13 } });
    let ask = json!({ "from": "aldric", "key": "k1", "run": run });
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/brute/asks",
        Some(&ask.to_string()),
    );
    assert_eq!(status, 409, "{answer}");
    assert_eq!(codes(&answer), ["not-watched"]);
    assert_eq!(answer["errors"][0]["path"], "/id");

    let reply = json!({ "to": "aldric", "key": "k1", "outcome": { "result": "success" } });
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/brute/asks/answer",
        Some(&reply.to_string()),
    );
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["errors"][0]["path"], "/to");

    for (body, code, path) in [
        (
            json!({ "from": "aldric", "key": "k" }),
            "invalid-request",
            "/run",
        ),
        (
            json!({ "from": 3, "key": "k", "run": {} }),
            "wrong-type",
            "/from",
        ),
        (
            json!({ "from": "aldric", "key": "k", "run": [] }),
            "wrong-type",
            "/run",
        ),
        (
            json!({ "from": "aldric", "key": "k", "run": {}, "extra": 1 }),
            "invalid-request",
            "/extra",
        ),
    ] {
        let (status, answer) = request(
            addr,
            "POST",
            "/api/characters/brute/asks",
            Some(&body.to_string()),
        );
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(codes(&answer), [code], "{body}");
        assert_eq!(answer["errors"][0]["path"], path, "{body}");
    }
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/nobody/asks",
        Some(&ask.to_string()),
    );
    assert_eq!(status, 404, "{answer}");
}
