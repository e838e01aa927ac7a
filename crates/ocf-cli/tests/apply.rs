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
