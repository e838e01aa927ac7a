//! computeSheet's `offers` as a whole (decisions.md, "Offers"): the full shape of each kind, and
//! offers following a Session's edits.

use expect_test::{Expect, expect};
use ocf_engine::Session;
use ocf_model::{Character, Literal, PackRelease};

/// A ruleset of the packs written as releases in YAML, loaded in order.
fn ruleset(packs: &[&str]) -> ocf_model::Ruleset {
    let releases: Vec<PackRelease> = packs
        .iter()
        .map(|yaml| ocf_model::from_yaml_str(yaml, "pack").expect("a pack release"))
        .collect();
    ocf_load::load_ruleset(&releases, &ocf_load::LoadOptions::default()).expect("packs load")
}

fn character(yaml: &str) -> Character {
    ocf_model::from_yaml_str(yaml, "character").expect("a character")
}

/// The `offers` list, one offer per line.
fn offers(sheet: &serde_json::Value) -> String {
    sheet["offers"]
        .as_array()
        .expect("offers is always a list")
        .iter()
        .map(|o| format!("{o}\n"))
        .collect()
}

const CORE: &str = r#"
id: core
version: 1.0.0
specVersion: 1.0.0
rules:
  fields:
    stress: { type: integer, input: true, default: 0 }
    stress.max: { type: integer, default: 9 }
  actions:
  - { id: take-trauma, steps: [] }
  - { id: new-crew, steps: [] }
  creation:
  - { id: crew-start, action: new-crew }
  links:
    crew: { pack: core }
  followUps:
  - { id: trauma, action: take-trauma, while: stress > stress.max, params: { over: stress - stress.max, none: 'null', pool: 2d6 + 1 } }
  - { id: found-crew, create: true, while: "!has(links.crew)", link: crew, start: crew-start }
  - { id: vent, action: take-trauma }
  contentTypes:
    feature: {}
content:
- id: gift
  type: feature
  actions: [{ id: boon, steps: [] }]
  followUps: [{ id: boon, action: boon }]
"#;

fn check(pc: &str, expect: Expect) {
    let sheet =
        ocf_engine::compute_sheet_call(&ruleset(&[CORE]), &character(pc), &[], &Default::default());
    expect.assert_eq(&offers(&sheet));
}

#[test]
fn each_kind_of_offer_has_its_whole_shape() {
    // A derived offer with evaluated params (null left out, dice as notation), a create offer
    // running its start's action, and a stored one with its entry and source.
    check(
        r#"
id: pc
specVersion: 1.0.0
values: { 'core:stress': 12 }
features: [{ id: g, item: 'core:gift' }]
followUps:
- { id: boon-1, followUp: 'core:gift#boon', source: 'core:gift', params: { rank: 3, gone: null } }
"#,
        expect![[r#"
            {"id":"core:trauma","kind":"derived","followUp":"core:trauma","action":{"id":"core:take-trauma","followUp":"core:trauma"},"source":{"type":"rules","id":"core"},"params":{"over":3,"pool":"2d6 + 1"}}
            {"id":"core:found-crew","kind":"derived","followUp":"core:found-crew","action":{"id":"core:new-crew","followUp":"core:found-crew"},"source":{"type":"rules","id":"core"},"create":{"link":"core:crew","start":"core:crew-start"}}
            {"id":"boon-1","kind":"ephemeral","followUp":"core:gift#boon","action":{"id":"core:gift#boon","entry":"g","followUp":"boon-1"},"source":{"type":"item","id":"core:gift","entry":"g"},"params":{"rank":3}}
        "#]],
    );
}

#[test]
fn a_derived_offer_ends_with_its_condition() {
    // EA: "A derived offer needs no clearing: the action's changes end its condition."
    let mut session = Session::new(ruleset(&[CORE]));
    let pc = session.open(
        &character("id: pc\nspecVersion: 1.0.0\nlinks: { 'core:crew': gull }\n"),
        &[],
    );
    let ids = |session: &Session| {
        session
            .sheet(pc)
            .unwrap()
            .offers()
            .iter()
            .map(|o| o.id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&session), Vec::<String>::new());
    session
        .set_value(pc, "core:stress", Some(Literal::Number(10.into())))
        .unwrap();
    assert_eq!(ids(&session), ["core:trauma"]);
    session
        .set_value(pc, "core:stress", Some(Literal::Number(0.into())))
        .unwrap();
    assert_eq!(ids(&session), Vec::<String>::new());
}

#[test]
fn stored_offers_follow_the_file_and_are_saved_back() {
    let mut session = Session::new(ruleset(&[CORE]));
    let base = "id: pc\nspecVersion: 1.0.0\nlinks: { 'core:crew': gull }\n";
    let pc = session.open(&character(base), &[]);
    let stored = format!("{base}followUps: [{{ id: vent-1, followUp: 'core:vent' }}]\n");
    session.update(pc, &character(&stored)).unwrap();
    let sheet = session.sheet_json(pc).unwrap();
    expect![[r#"
        {"id":"vent-1","kind":"ephemeral","followUp":"core:vent","action":{"id":"core:take-trauma","followUp":"vent-1"},"source":{"type":"rules","id":"core"}}
    "#]]
    .assert_eq(&offers(&sheet));
    assert_eq!(
        session.file(pc).unwrap().follow_ups,
        character(&stored).follow_ups
    );
    // clearFollowUp deletes the stored entry: the offer goes with it.
    session.update(pc, &character(base)).unwrap();
    assert_eq!(offers(&session.sheet_json(pc).unwrap()), "");
}

#[test]
fn editing_stored_offers_recomputes_no_field() {
    // The stored offers are an input of their own: a new one re-runs the offers and the parts of
    // the sheet that hold them, not a field value, nor the activations.
    let mut session = Session::with_execution_log(ruleset(&[CORE]));
    let base = "id: pc\nspecVersion: 1.0.0\nvalues: { 'core:stress': 12 }\n";
    let pc = session.open(&character(base), &[]);
    session.sheet(pc).unwrap();
    session.take_executed();
    let stored = format!("{base}followUps: [{{ id: vent-1, followUp: 'core:vent' }}]\n");
    session.update(pc, &character(&stored)).unwrap();
    let sheet = session.sheet_json(pc).unwrap();
    assert_eq!(sheet["offers"].as_array().map(Vec::len), Some(3));
    let mut ran: Vec<String> = session
        .take_executed()
        .into_iter()
        .map(|l| l.split('(').next().unwrap_or_default().to_owned())
        .collect();
    ran.sort();
    ran.dedup();
    expect![[r#"
        offers
        sheet_rest"#]]
    .assert_eq(&ran.join("\n"));
}
