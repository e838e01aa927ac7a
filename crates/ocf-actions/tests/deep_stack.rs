//! An action reads fields on whatever thread calls it (a service's blocking threads have 2 MiB of
//! stack): a chain of fields as deep as the field depth limit lets an untrusted pack write,
//! computed on the proposed sheet, answers there instead of overflowing the stack.

mod common;

use ocf_engine::Session;
use serde_json::json;

/// `t:c0` (an input), then `t:c<i>` = `c<i-1> + 1` up to `t:c<n>`; the action `t:deep` sets
/// `c0` to 5 and reads `c<n>` on the proposed sheet.
fn chain(n: usize) -> ocf_model::Ruleset {
    let mut fields = serde_json::Map::new();
    fields.insert(
        "t:c0".into(),
        json!({ "declaredIn": "t", "type": "integer", "input": true, "default": 1 }),
    );
    for i in 1..=n {
        fields.insert(
            format!("t:c{i}"),
            json!({ "declaredIn": "t", "type": "integer", "formula": format!("c{} + 1", i - 1) }),
        );
    }
    serde_json::from_value(json!({
        "packs": [{ "id": "t", "version": "1.0.0", "specVersion": "1.0.0", "scope": ["t"] }],
        "fields": fields,
        "actions": { "t:deep": { "declaredIn": "t", "id": "deep", "steps": [
            { "id": "raise", "kind": "changes",
              "changes": [{ "type": "set", "field": "c0", "value": "5" }] },
            { "id": "read", "kind": "outcome", "sheet": "proposed",
              "data": { "v": format!("c{n}") } },
        ] } },
    }))
    .expect("a ruleset")
}

#[test]
fn a_deep_chain_on_the_proposed_sheet_answers_on_a_small_stack() {
    let n = ocf_engine::field::MAX_FIELD_DEPTH - 100;
    let rules = chain(n);
    let outcome = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let mut session = Session::new(rules);
            let character = serde_json::from_value(json!({ "id": "pc", "specVersion": "1.0.0" }))
                .expect("a character");
            let pc = session.open(&character, &[]);
            let out = common::start(&session, pc, json!({ "action": { "id": "t:deep" } }));
            out["outcome"].clone()
        })
        .expect("a thread")
        .join()
        .expect("no overflow");
    assert_eq!(outcome, json!({ "data": { "v": 5 + n } }));
}

#[test]
fn a_deep_chain_checked_again_after_an_edit_answers_on_a_small_stack() {
    // The second call checks the given sheet's memos of the whole chain again after the edit (the
    // proposed sheet's judgement reads them): salsa's own recursion, on the caller's stack.
    let n = ocf_engine::field::MAX_FIELD_DEPTH - 100;
    let rules = chain(n);
    let outcomes = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let mut session = Session::new(rules);
            let character = serde_json::from_value(json!({ "id": "pc", "specVersion": "1.0.0" }))
                .expect("a character");
            let pc = session.open(&character, &[]);
            let call = || json!({ "action": { "id": "t:deep" } });
            let first = common::start(&session, pc, call())["outcome"].clone();
            session.set_value(pc, "t:c0", Some(json!(7))).expect("open");
            let second = common::start(&session, pc, call())["outcome"].clone();
            (first, second)
        })
        .expect("a thread")
        .join()
        .expect("no overflow");
    let expected = json!({ "data": { "v": 5 + n } });
    assert_eq!(outcomes, (expected.clone(), expected));
}
