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

/// How deep the chain is: as deep as the field depth limit lets a pack write, less some room.
const DEPTH: usize = ocf_engine::field::MAX_FIELD_DEPTH - 100;

/// What `run` gives on a thread of 2 MiB of stack (a service's), with a session holding a
/// character on the chain's ruleset; a stack overflow aborts the test.
fn on_a_small_stack<T: Send + 'static>(
    run: impl FnOnce(&mut Session, ocf_engine::CharacterId) -> T + Send + 'static,
) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let mut session = Session::new(chain(DEPTH));
            let character = serde_json::from_value(json!({ "id": "pc", "specVersion": "1.0.0" }))
                .expect("a character");
            let pc = session.open(&character, &[]);
            run(&mut session, pc)
        })
        .expect("a thread")
        .join()
        .expect("no overflow")
}

/// The outcome of `t:deep`: the chain's last value on the proposed sheet.
fn deep(session: &Session, pc: ocf_engine::CharacterId) -> serde_json::Value {
    common::start(session, pc, json!({ "action": { "id": "t:deep" } }))["outcome"].clone()
}

#[test]
fn a_deep_chain_on_the_proposed_sheet_answers_on_a_small_stack() {
    let outcome = on_a_small_stack(|session, pc| deep(session, pc));
    assert_eq!(outcome, json!({ "data": { "v": 5 + DEPTH } }));
}

#[test]
fn a_deep_chain_checked_again_after_an_edit_answers_on_a_small_stack() {
    // The second call checks the given sheet's memos of the whole chain again after the edit (the
    // proposed sheet's judgement reads them): salsa's own recursion, on the caller's stack.
    let outcomes = on_a_small_stack(|session, pc| {
        let first = deep(session, pc);
        session.set_value(pc, "t:c0", Some(json!(7))).expect("open");
        (first, deep(session, pc))
    });
    let expected = json!({ "data": { "v": 5 + DEPTH } });
    assert_eq!(outcomes, (expected.clone(), expected));
}
