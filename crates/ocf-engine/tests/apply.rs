//! applyChanges through a session: a failed batch leaves everything as it was, a batch that applies
//! recomputes only what it touched, and random batches keep both promises (atomicity, replay).

mod common;

use ocf_engine::{ApplyOptions, Session};
use ocf_model::{Change, Character, Ruleset};
use proptest::prelude::*;

fn core() -> Ruleset {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/test-packs/apply-core"
    );
    let release =
        ocf_load::source::read_pack(std::path::Path::new(dir)).expect("apply-core builds");
    ocf_load::load_ruleset(&[release], &ocf_load::LoadOptions::default()).expect("apply-core loads")
}

fn changes(yaml: &str) -> Vec<Change> {
    let json: serde_json::Value = serde_yaml::from_str(yaml).unwrap();
    ocf_engine::changes::read_batch(&json).unwrap()
}

fn pc() -> Character {
    common::character(
        "{ inventory: [{ id: s, item: 'core:sword' }, { id: t, item: 'core:torch', quantity: 3 }],
           applied: [{ id: p, source: 'core:poisoned' }], values: { 'core:hp.temp': 2 } }",
    )
}

#[test]
fn a_failed_batch_leaves_the_session_as_it_was() {
    let mut session = Session::new(core());
    let id = session.open(&pc(), &[]);
    let file = session.file(id).unwrap().clone();
    let sheet = session.sheet_json(id).unwrap();
    let batch = changes(
        "[{ type: adjust, field: hp.current, by: '-5' },
          { type: equip, entry: s, equipped: 'true' },
          { type: removeItem, entry: nobody }]",
    );
    let error = session
        .apply(id, &batch, ApplyOptions::default())
        .unwrap_err();
    assert_eq!(
        (error.code.as_str(), error.path.as_str()),
        ("unknown-id", "/changes/2/entry")
    );
    assert_eq!(session.file(id).unwrap(), &file);
    assert_eq!(session.sheet_json(id).unwrap(), sheet);
}

#[test]
fn a_batch_through_a_session_recomputes_only_what_it_touched() {
    let mut session = Session::with_execution_log(core());
    let id = session.open(&pc(), &[]);
    session.sheet(id).unwrap();
    session.take_executed();
    let applied = session
        .apply(
            id,
            &changes("[{ type: set, field: gold, value: '3' }]"),
            ApplyOptions::default(),
        )
        .unwrap();
    session.sheet(id).unwrap();
    let fields: Vec<String> = session
        .take_executed()
        .into_iter()
        .filter(|l| l.starts_with("field_value("))
        .collect();
    assert_eq!(
        fields,
        vec!["field_value(core:gold)".to_owned()],
        "{fields:?}"
    );
    // The session's sheet is the sheet of the file the batch gave.
    let fresh =
        ocf_engine::compute_sheet_call(&core(), &applied.character, &[], &Default::default());
    assert_eq!(session.sheet_json(id).unwrap(), fresh);
    assert_eq!(session.file(id).unwrap(), &applied.character);
}

/// One change of a random batch, drawn from what the apply-core pack takes, some of them failing.
fn change() -> impl Strategy<Value = String> {
    let entry = prop_oneof![Just("s"), Just("t"), Just("p"), Just("gone")];
    prop_oneof![
        (-15i64..15).prop_map(|n| format!("{{ type: adjust, field: hp.current, by: '{n}' }}")),
        (-3i64..3).prop_map(|n| format!("{{ type: adjust, field: wounds, by: '{n}' }}")),
        (-5i64..15).prop_map(|n| format!("{{ type: set, field: hp.current, value: '{n}' }}")),
        (0i64..4).prop_map(|n| format!("{{ type: set, field: hp.temp, value: '{n}' }}")),
        entry
            .clone()
            .prop_map(|e| format!("{{ type: equip, entry: {e}, equipped: 'true' }}")),
        (entry.clone(), -4i64..4)
            .prop_map(|(e, n)| format!("{{ type: adjustQuantity, entry: {e}, by: '{n}' }}")),
        (entry.clone(), -2i64..7).prop_map(|(e, n)| format!(
            "{{ type: adjustState, entry: {e}, key: charges, by: '{n}' }}"
        )),
        Just("{ type: addItem, entry: { item: \"'torch'\" } }".to_owned()),
        Just("{ type: applyEffect, source: \"'poisoned'\" }".to_owned()),
        entry
            .clone()
            .prop_map(|e| format!("{{ type: removeItem, entry: {e} }}")),
        Just("{ type: removeEffect, applied: { where: 'true' } }".to_owned()),
        Just("{ type: set, field: stance, value: \"'sleepy'\" }".to_owned()),
        Just("{ type: choose, path: { choice: [path] }, option: \"'dark'\" }".to_owned()),
        Just("{ type: offerFollowUp, followUp: bloodied }".to_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// A failed batch leaves the session's file and sheet byte-identical; a batch that applies
    /// replays from its returned batch, without a dice function, to the same character.
    #[test]
    fn random_batches_are_atomic_and_replay(batch in proptest::collection::vec(change(), 1..8), strict in any::<bool>()) {
        let ruleset = core();
        let batch = changes(&format!("[{}]", batch.join(", ")));
        let mut session = Session::new(ruleset.clone());
        let id = session.open(&pc(), &[]);
        let before = serde_json::to_string(session.file(id).unwrap()).unwrap();
        let sheet = serde_json::to_string(&session.sheet_json(id).unwrap()).unwrap();
        let options = ApplyOptions { strict, ..ApplyOptions::default() };
        match session.apply(id, &batch, options) {
            Err(_) => {
                prop_assert_eq!(serde_json::to_string(session.file(id).unwrap()).unwrap(), before);
                prop_assert_eq!(serde_json::to_string(&session.sheet_json(id).unwrap()).unwrap(), sheet);
            }
            Ok(applied) => {
                let options = ApplyOptions { strict, ..ApplyOptions::default() };
                let again = ocf_engine::apply_changes(&ruleset, &pc(), &applied.batch, options).unwrap();
                prop_assert_eq!(again.character, applied.character);
            }
        }
    }
}

#[test]
fn upgrade_repins_and_reports_what_no_longer_resolves() {
    let pc = common::character(
        "{ packs: [{ id: core, version: 0.9.0 }], values: { 'core:hp.current': 3, 'core:gone': 1 },
           inventory: [{ id: s, item: 'core:sword' }, { id: x, item: 'core:lost' }],
           followUps: [{ id: o, followUp: 'core:nothing' }] }",
    );
    let (file, report) = ocf_engine::changes::upgrade::upgrade(&core(), &pc).unwrap();
    assert_eq!(
        serde_json::to_value(&file.packs).unwrap(),
        serde_json::json!([{ "id": "core", "version": "1.0.0" }])
    );
    let codes: Vec<(String, String)> = report
        .iter()
        .map(|r| {
            (
                r["code"].as_str().unwrap().to_owned(),
                r["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        codes,
        [
            ("unknown-field".to_owned(), "/values/core:gone".to_owned()),
            (
                "unknown-reference".to_owned(),
                "/inventory/1/item".to_owned()
            ),
            (
                "unknown-follow-up".to_owned(),
                "/followUps/0/followUp".to_owned()
            ),
        ]
    );
    assert_eq!(file.inventory.len(), 2, "nothing is dropped");
}

/// What applyChanges writes, the engine must read again (issue 36): a 5 MB string would make a
/// file past the character-file size limit (4 MB), so the change is refused at its path, and a
/// string under it applies.
#[test]
fn a_change_whose_file_would_not_read_back_is_refused() {
    let big = "x".repeat(5 << 20);
    let batch: Vec<Change> = ocf_engine::changes::read_batch(&serde_json::json!([
        { "type": "set", "field": "hp.current", "value": "3" },
        { "type": "setExtension", "namespace": "app", "data": { "notes": big } },
    ]))
    .unwrap();
    let error =
        ocf_engine::apply_changes(&core(), &pc(), &batch, ApplyOptions::default()).unwrap_err();
    assert_eq!(
        (error.code.as_str(), error.path.as_str()),
        ("safety-limit-exceeded", "/changes/1/data")
    );
    // Two 3 MB notes fit one by one, not in one file.
    let three = "y".repeat(3 << 20);
    let batch: Vec<Change> = ocf_engine::changes::read_batch(&serde_json::json!([
        { "type": "setExtension", "namespace": "a", "data": three },
        { "type": "setExtension", "namespace": "b", "data": three },
    ]))
    .unwrap();
    let error =
        ocf_engine::apply_changes(&core(), &pc(), &batch, ApplyOptions::default()).unwrap_err();
    assert_eq!(
        (error.code.as_str(), error.path.as_str()),
        ("safety-limit-exceeded", "/changes")
    );
    let batch: Vec<Change> = ocf_engine::changes::read_batch(&serde_json::json!([
        { "type": "setExtension", "namespace": "a", "data": three },
    ]))
    .unwrap();
    assert!(ocf_engine::apply_changes(&core(), &pc(), &batch, ApplyOptions::default()).is_ok());
}
