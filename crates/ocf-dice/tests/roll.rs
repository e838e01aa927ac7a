//! Rolling with given faces: every modifier, pinned by the faces' flags and the totals.

mod common;

use common::dice;
use expect_test::{Expect, expect};
use ocf_dice::{DiceError, DiceLimits, FixedFaces, Modifier, roll};
use ocf_syntax::dice::Compare;

/// Rolls `notation` with `faces` and shows each dice item as `faces = value` (dropped faces in
/// brackets, `r` rerolled, `!` exploded), then the total.
fn show(notation: &str, faces: &[i64]) -> String {
    let mut given = FixedFaces::new(faces.to_vec());
    let r = match roll(&dice(notation), &mut given, &DiceLimits::default()) {
        Ok(r) => r,
        Err(e) => return format!("{}: {e}", e.code()),
    };
    let mut out = Vec::new();
    for item in &r.items {
        let Some(item_faces) = &item.faces else {
            out.push(format!("flat {}", item.value));
            continue;
        };
        let shown: Vec<String> = item_faces
            .iter()
            .map(|f| {
                let mut s = f.value.to_string();
                if f.rerolled {
                    s.push('r');
                }
                if f.exploded {
                    s.push('!');
                }
                if f.kept { s } else { format!("[{s}]") }
            })
            .collect();
        out.push(format!("{} = {}", shown.join(" "), item.value));
    }
    let unused = faces.len() - given.used();
    let unused = if unused > 0 {
        format!(" ({unused} faces unused)")
    } else {
        String::new()
    };
    format!("{} => {}{unused}", out.join(" | "), r.total)
}

#[test]
fn every_modifier_with_given_faces() {
    let cases: &[(&str, &[i64], Expect)] = &[
        ("4d6dl1", &[1, 2, 3, 4], expect!["[1] 2 3 4 = 9 => 9"]),
        ("4d6dh1", &[1, 2, 3, 4], expect!["1 2 3 [4] = 6 => 6"]),
        ("2d20kh1", &[7, 15], expect!["[7] 15 = 15 => 15"]),
        ("2d20kl1", &[7, 15], expect!["7 [15] = 7 => 7"]),
        // Among equal faces the earlier ranks lower: it is the one dropped.
        ("3d6dl1", &[4, 2, 2], expect!["4 [2] 2 = 6 => 6"]),
        // Keep and drop narrow in written order: drop the lowest, then keep the highest two.
        (
            "5d6dl1kh2",
            &[1, 5, 3, 6, 2],
            expect!["[1] 5 [3] 6 [2] = 11 => 11"],
        ),
        ("1d6!", &[6, 6, 2], expect!["6! 6! 2 = 14 => 14"]),
        ("1d6!>4", &[5, 4], expect!["5! 4 = 9 => 9"]),
        // Explosions come in rounds: both dice's first extra dice, then the 6 among them.
        ("2d6!", &[6, 6, 6, 2, 3], expect!["6! 6! 6! 2 3 = 23 => 23"]),
        // With `!` each extra die is a die of its own for keep and drop.
        ("2d6!kh1", &[6, 1, 2], expect!["6! [1] [2] = 6 => 6"]),
        // With `!!` the chain is one die.
        ("2d6!!kh1", &[6, 5, 2], expect!["6! [5] 2 = 8 => 8"]),
        ("1d6!!", &[6, 6, 2], expect!["6! 6! 2 = 14 => 14"]),
        ("1d20ro1", &[1, 1], expect!["[1r] 1 = 1 => 1"]),
        ("1d20r1", &[1, 1, 17], expect!["[1r] [1r] 17 = 17 => 17"]),
        ("1d20r<3", &[2, 1, 3], expect!["[2r] [1r] 3 = 3 => 3"]),
        // Rerolls come in rounds too, each round in die order.
        (
            "3d6r1",
            &[1, 4, 1, 1, 6, 5],
            expect!["[1r] 4 [1r] [1r] 6 5 = 15 => 15"],
        ),
        // Rerolls before explosions: the new 6 explodes.
        ("1d6ro1!", &[1, 6, 3], expect!["[1r] 6! 3 = 9 => 9"]),
        ("5d6cs>=5", &[1, 5, 6, 4, 5], expect!["1 5 6 4 5 = 3 => 3"]),
        // Failures alone are counted as such.
        ("5d6cf1", &[1, 5, 6, 1, 5], expect!["1 5 6 1 5 = 2 => 2"]),
        // Both: successes minus failures.
        (
            "5d10cs>=7cf1",
            &[1, 7, 10, 1, 3],
            expect!["1 7 10 1 3 = 0 => 0"],
        ),
        (
            "10d10cs>=7",
            &[7, 8, 9, 10, 1, 2, 3, 4, 5, 6],
            expect!["7 8 9 10 1 2 3 4 5 6 = 4 => 4"],
        ),
        // Counting looks at the kept dice only.
        ("3d6kh2cs>=4", &[4, 6, 1], expect!["4 6 [1] = 2 => 2"]),
        // With `!` each face of a chain counts.
        ("2d10!cs>=8", &[10, 3, 9], expect!["10! 3 9 = 2 => 2"]),
        ("1d20min10", &[3], expect!["10 = 10 => 10"]),
        ("1d20min10", &[14], expect!["14 = 14 => 14"]),
        ("1d20max15", &[19], expect!["15 = 15 => 15"]),
        // Minimum, then maximum.
        ("1d20min12max10", &[5], expect!["10 = 10 => 10"]),
        // Explosions look at the rolled face, not the clamped one.
        ("1d6min6!", &[1], expect!["6 = 6 => 6"]),
        ("4dF", &[-1, 0, 1, 1], expect!["-1 0 1 1 = 1 => 1"]),
        ("4dFcs>=1", &[-1, 0, 1, 1], expect!["-1 0 1 1 = 2 => 2"]),
        ("1d%", &[100], expect!["100 = 100 => 100"]),
        (
            "1d20 - 1d4 - 2",
            &[12, 3],
            expect!["12 = 12 | 3 = -3 | flat -2 => 7"],
        ),
        ("-2d6 + 5", &[3, 4], expect!["3 4 = -7 | flat 5 => -2"]),
        ("0d6 + 1", &[], expect![" = 0 | flat 1 => 1"]),
        ("3d6dl5", &[2, 3, 4], expect!["[2] [3] [4] = 0 => 0"]),
    ];
    for (notation, faces, expected) in cases {
        expected.assert_eq(&show(notation, faces));
    }
}

#[test]
fn reroll_count_takes_the_lowest_matching_dice_first() {
    // Empowered Spell style: reroll at most 2 of the dice showing 3 or less, lowest first, earliest
    // first among equal faces; the chosen dice are rerolled in die order.
    let term = |count| {
        let mut v = dice("5d6");
        v.terms[0].modifiers.push(Modifier::RerollOnce {
            at: Compare {
                op: ocf_syntax::dice::CompareOp::Le,
                value: 3,
            },
            count,
        });
        v
    };
    let faces = vec![3, 1, 2, 1, 6, 5, 4];
    let r = roll(
        &term(Some(2)),
        &mut FixedFaces::new(faces.clone()),
        &DiceLimits::default(),
    )
    .unwrap();
    let flags: Vec<(i64, bool)> = r.items[0]
        .faces
        .as_ref()
        .unwrap()
        .iter()
        .map(|f| (f.value, f.rerolled))
        .collect();
    // The two 1s (dice 2 and 4) are rerolled, into 5 and 4; the 3 and the 2 stay.
    assert_eq!(
        flags,
        vec![
            (3, false),
            (1, true),
            (2, false),
            (1, true),
            (6, false),
            (5, false),
            (4, false)
        ]
    );
    assert_eq!(r.total, 3 + 2 + 6 + 5 + 4);
    // Without a count every matching die is rerolled.
    let all = roll(
        &term(None),
        &mut FixedFaces::new(vec![3, 1, 2, 1, 6, 4, 4, 4, 4]),
        &DiceLimits::default(),
    )
    .unwrap();
    assert_eq!(all.total, 6 + 16);
}

#[test]
fn roll_items_serialize_in_the_spec_shape() {
    let r = roll(
        &dice("2d20kh1 + 1dF + 1d% + 3"),
        &mut FixedFaces::new(vec![7, 15, -1, 42]),
        &DiceLimits::default(),
    )
    .unwrap();
    expect![[r#"
        {
          "items": [
            {
              "kind": "dice",
              "count": 2,
              "sides": 20,
              "modifiers": [
                {
                  "type": "keepHighest",
                  "count": 1
                }
              ],
              "faces": [
                {
                  "value": 7,
                  "kept": false
                },
                {
                  "value": 15,
                  "kept": true
                }
              ],
              "value": 15
            },
            {
              "kind": "dice",
              "count": 1,
              "sides": "F",
              "modifiers": [],
              "faces": [
                {
                  "value": -1,
                  "kept": true
                }
              ],
              "value": -1
            },
            {
              "kind": "dice",
              "count": 1,
              "sides": 100,
              "modifiers": [],
              "faces": [
                {
                  "value": 42,
                  "kept": true
                }
              ],
              "value": 42
            },
            {
              "kind": "flat",
              "value": 3
            }
          ],
          "total": 59
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&r).unwrap());
}

#[test]
fn every_modifier_serializes_with_its_arguments() {
    let r = roll(
        &dice("1d6!>5!!ro1r<2cs>=5cf1min2max5kh1kl1dh0dl0"),
        &mut FixedFaces::new(vec![3]),
        &DiceLimits::default(),
    )
    .unwrap();
    expect![[r#"[{"type":"explode","at":{"compare":"gt","value":5}},{"type":"explodeCompound"},{"type":"rerollOnce","at":{"compare":"eq","value":1}},{"type":"reroll","at":{"compare":"lt","value":2}},{"type":"countSuccesses","at":{"compare":"ge","value":5}},{"type":"countFailures","at":{"compare":"eq","value":1}},{"type":"minimum","value":2},{"type":"maximum","value":5},{"type":"keepHighest","count":1},{"type":"keepLowest","count":1},{"type":"dropHighest","count":0},{"type":"dropLowest","count":0}]"#]]
    .assert_eq(&serde_json::to_string(&r.items[0].modifiers).unwrap());
    let back: ocf_dice::Roll = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back, r);
}

#[test]
fn errors_have_the_spec_codes() {
    let cases: &[(&str, &[i64], Expect)] = &[
        (
            "1d6",
            &[7],
            expect!["invalid-face: 7 is not a face of a d6"],
        ),
        (
            "1dF",
            &[2],
            expect!["invalid-face: 2 is not a face of a dF"],
        ),
        (
            "1d%",
            &[0],
            expect!["invalid-face: 0 is not a face of a d%"],
        ),
        (
            "2d6!",
            &[6],
            expect!["no-more-faces: no face left for a d6 (initial, item 1, die 2)"],
        ),
        (
            "1d6 + 1d6!",
            &[1, 6],
            expect!["no-more-faces: no face left for a d6 (explosion, item 2, die 1)"],
        ),
    ];
    for (notation, faces, expected) in cases {
        expected.assert_eq(&show(notation, faces));
    }
}

#[test]
fn safety_limits_end_the_roll() {
    let limits = DiceLimits {
        max_explosions: 3,
        max_rerolls: 2,
        max_dice_per_item: 10,
    };
    let run = |notation: &str, faces: Vec<i64>| {
        roll(&dice(notation), &mut FixedFaces::new(faces), &limits).map(|r| r.total)
    };
    assert_eq!(run("1d6!", vec![6, 6, 6, 1]), Ok(19));
    let explosions = run("1d6!", vec![6; 10]).unwrap_err();
    assert_eq!(
        (explosions.code(), explosions.to_string().as_str()),
        (
            "safety-limit-exceeded",
            "the roll needs more than maxExplosions (3)"
        )
    );
    assert_eq!(run("1d20r1", vec![1, 1, 5]), Ok(5));
    assert_eq!(
        run("1d20r1", vec![1, 1, 1]).unwrap_err().to_string(),
        "the roll needs more than maxRerolls (2)"
    );
    assert_eq!(
        run("11d6", vec![]).unwrap_err().to_string(),
        "the roll needs more than maxDicePerItem (10)"
    );
    // `1d1!` explodes forever; it ends with the error, with the default limits too.
    let err = roll(
        &dice("1d1!"),
        &mut ocf_dice::SeededDice::new(1),
        &DiceLimits::default(),
    )
    .unwrap_err();
    assert_eq!(err.code(), "safety-limit-exceeded");
    let err = roll(
        &dice("1d1r1"),
        &mut ocf_dice::SeededDice::new(1),
        &DiceLimits::default(),
    )
    .unwrap_err();
    assert_eq!(err.code(), "safety-limit-exceeded");
}

#[test]
fn faces_are_asked_for_with_their_die_and_reason() {
    use ocf_dice::{DiceFunction, FaceRequest};
    struct Log(Vec<String>, FixedFaces);
    impl DiceFunction for Log {
        fn face(&mut self, r: &FaceRequest) -> Result<i64, DiceError> {
            self.0.push(format!(
                "{}:{}#{}{}",
                r.item,
                r.die_index,
                r.reason.as_str(),
                r.die
            ));
            self.1.face(r)
        }
    }
    let mut log = Log(Vec::new(), FixedFaces::new(vec![1, 6, 4, 6, 2, 3]));
    roll(&dice("2d6ro1! + 1d4"), &mut log, &DiceLimits::default()).unwrap();
    expect![[r#"["0:0#initiald6", "0:1#initiald6", "0:0#rerolld6", "0:1#explosiond6", "0:1#explosiond6", "1:0#initiald4"]"#]]
        .assert_eq(&format!("{:?}", log.0));
}
