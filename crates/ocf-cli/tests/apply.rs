//! `ocf apply`: what a batch changed, for people, and the new file written where asked.

use expect_test::expect;

mod support;
use support::ocf;

#[test]
fn apply_prints_each_changed_field_and_writes_the_new_file() {
    let out = std::env::temp_dir().join(format!("ocf-apply-{}.yaml", std::process::id()));
    let (text, code) = ocf(&[
        "apply",
        "testdata/characters/fighter-5.yaml",
        "testdata/batches/fighter-takes-fire.yaml",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    expect![[r#"
        5e-srd-5.1:hp.current: 44 → 37
        5e-srd-5.1:conditions.prone: false → true
    "#]]
    .assert_eq(&text);
    let written = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert!(written.contains("5e-srd-5.1:hp.current: 37"), "{written}");
    assert!(
        written.contains("source: 5e-srd-5.1:conditions.prone"),
        "{written}"
    );
}

#[test]
fn apply_reports_the_failing_change_and_exits_1() {
    let batch = std::env::temp_dir().join(format!("ocf-apply-bad-{}.yaml", std::process::id()));
    std::fs::write(
        &batch,
        "changes: [{ type: equip, entry: nobody, equipped: 'true' }]\n",
    )
    .unwrap();
    let (text, code) = ocf(&[
        "apply",
        "testdata/characters/fighter-5.yaml",
        batch.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&batch);
    assert_eq!(code, 1);
    expect![[r#"
        error at /changes/0/entry: unknown-id: the character has no entry `nobody`
    "#]]
    .assert_eq(&text);
}

/// A batch file is read as a character file is (issue 36): a key written twice, a number JSON has
/// no form for and a change the engine can't read are refused with a code and a place in the file.
#[test]
fn a_batch_file_is_read_within_the_character_file_limits() {
    let run = |name: &str, text: &str| {
        let batch = std::env::temp_dir().join(format!("ocf-{name}-{}.yaml", std::process::id()));
        std::fs::write(&batch, text).unwrap();
        let (out, code) = ocf(&[
            "apply",
            "testdata/characters/fighter-5.yaml",
            batch.to_str().unwrap(),
        ]);
        let _ = std::fs::remove_file(&batch);
        assert_eq!(code, 1, "{out}");
        // The temporary folder differs between machines.
        out.lines()
            .next()
            .unwrap_or_default()
            .rsplit_once(".yaml")
            .map(|(_, rest)| rest.to_owned())
            .unwrap_or_default()
    };
    let duplicate = run(
        "dup",
        "changes:\n- {type: adjust, field: hp.current, by: '-30', tags: [damage.fire]}\nchanges: []\n",
    );
    let nan = run(
        "nan",
        "changes:\n- {type: set, field: hp.current, value: .nan}\n",
    );
    let unknown = run(
        "unknown",
        "changes:\n- {type: set, field: hp.current}\n- {type: fly}\n",
    );
    expect![[r#"
        :3:1: invalid-document: duplicate key `changes`
        :2:41: invalid-document: invalid value: floating point `NaN`, expected a finite number
        :3:3: schema-error: unknown variant `fly`, expected one of `set`, `adjust`, `addItem`, `removeItem`, `equip`, `setQuantity`, `adjustQuantity`, `setState`, `adjustState`, `applyEffect`, `removeEffect`, `toggleEffect`, `applyTemplate`, `removeTemplate`, `choose`, `unchoose`, `finishCreation`, `offerFollowUp`, `clearFollowUp`, `setExtension`, `setHomebrew`
    "#]]
    .assert_eq(&format!("{duplicate}\n{nan}\n{unknown}\n"));
}
