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
    expect![[r#""#]].assert_eq(&out);
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
    expect![[r#""#]].assert_eq(&out);
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
    expect![[r#""#]].assert_eq(&out);
    let (out, _) = ocf(&[
        "options",
        "testdata/characters/fighter-5.yaml",
        "fighter,nope",
        "--json",
    ]);
    expect![[r#""#]].assert_eq(&out);
}
