//! `ocf options CHARACTER PATH`: a choice's options, eligible first, each with why not and the
//! fields its pick would change, on the 5E sample fighter.

mod support;

use expect_test::expect;
use support::ocf;

/// The fighting style: each other style would lose Defense's +1 AC.
#[test]
fn the_fighters_fighting_style() {
    let (out, code) = ocf(&[
        "options",
        "testdata/characters/fighter-5.yaml",
        "fighter,features.fighter.fighting-style/style",
    ]);
    assert_eq!(code, 0, "{out}");
    expect![[r#"
        {"entry":"fighter","choice":["features.fighter.fighting-style/style"]}: pick 1..1, picked [defense]

        eligible:
          archery (Archery)  [inline]
              5e-srd-5.1:combat.ac: 19 -> 18
          defense (Defense)  [inline]  (picked)
          dueling (Dueling)  [inline]
              5e-srd-5.1:combat.ac: 19 -> 18
          great-weapon-fighting (Great Weapon Fighting)  [inline]
              5e-srd-5.1:combat.ac: 19 -> 18
          protection (Protection)  [inline]
              5e-srd-5.1:combat.ac: 19 -> 18
          two-weapon-fighting (Two-Weapon Fighting)  [inline]
              5e-srd-5.1:combat.ac: 19 -> 18
    "#]].assert_eq(&out);
}

/// A feat-like choice: the other ability score improvement moves the scores it reads and opens its
/// own choice.
#[test]
fn the_fighters_ability_score_improvement() {
    let (out, code) = ocf(&[
        "options",
        "testdata/characters/fighter-5.yaml",
        "fighter,asi-1",
    ]);
    assert_eq!(code, 0, "{out}");
    expect![[r#"
        {"entry":"fighter","choice":["asi-1"]}: pick 1..1, picked [5e-srd-5.1:improvements.plus-two]

        eligible:
          5e-srd-5.1:feats.grappler (Grappler)  [content]
              5e-srd-5.1:abilities.str.score: 18 -> 16
              5e-srd-5.1:abilities.str.mod: 4 -> 3
              5e-srd-5.1:saves.str.mod: 7 -> 6
              5e-srd-5.1:skills.athletics.mod: 7 -> 6
              5e-srd-5.1:load.capacity: 270 -> 240
          5e-srd-5.1:improvements.plus-two (+2 to one ability score)  [content]  (picked)
          5e-srd-5.1:improvements.plus-one-each (+1 to two ability scores)  [content]
              5e-srd-5.1:abilities.str.score: 18 -> 16
              5e-srd-5.1:abilities.str.mod: 4 -> 3
              5e-srd-5.1:saves.str.mod: 7 -> 6
              5e-srd-5.1:skills.athletics.mod: 7 -> 6
              5e-srd-5.1:load.capacity: 270 -> 240
              opens {"entry":"fighter","choice":["asi-1","5e-srd-5.1:improvements.plus-one-each","first"]}
              opens {"entry":"fighter","choice":["asi-1","5e-srd-5.1:improvements.plus-one-each","second"]}
    "#]]
    .assert_eq(&out);
}

/// A path naming no choice is its error and the exit code 1.
#[test]
fn an_unknown_path_is_an_error() {
    let (out, code) = ocf(&[
        "options",
        "testdata/characters/fighter-5.yaml",
        "fighter,nope",
    ]);
    assert_eq!(code, 1);
    expect![[r#"
        ocf: unknown-choice: the path names no choice of the character
    "#]]
    .assert_eq(&out);
    let (out, _) = ocf(&[
        "options",
        "testdata/characters/fighter-5.yaml",
        "fighter,nope",
        "--json",
    ]);
    expect![[r#"
        {
          "error": {
            "code": "unknown-choice",
            "message": "the path names no choice of the character",
            "data": {
              "path": {
                "entry": "fighter",
                "choice": [
                  "nope"
                ]
              }
            }
          }
        }
    "#]]
    .assert_eq(&out);
}
