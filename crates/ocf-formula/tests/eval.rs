//! The evaluator's behaviour, operator by operator and function by function. Each case is a
//! formula and what a user sees: the value as a formula literal would write it, or
//! `code@start..end` for an error and its range.

use ocf_formula::{Formula, Limits, MapContext};
use serde_json::json;

fn context() -> MapContext {
    MapContext::from_json(&json!({
        "self": { "equipped": true, "quantity": 3, "name": "longsword" },
        "flags": { "crit": true, "n": 2 },
        "links": {},
        "item": { "tags": ["a", "b"], "damage": { "$dice": "2d6 + 1" }, "ratio": 0.25 },
        "participants": { "target": [{ "id": "t1", "ac": 15 }] },
        "character": {
            "inventory": [
                { "id": "sword", "equipped": true, "quantity": 1, "fields": { "weight": 3 } },
                { "id": "arrows", "equipped": false, "quantity": 20, "fields": { "weight": 0.05 } }
            ],
            "features": [{ "id": "rage", "equipped": false, "quantity": 1, "fields": {} }]
        },
        "fields": {
            "level.total": 7,
            "skills.stealth.mod": 5,
            "skills.athletics.mod": 6,
            "speed.factor": 1.5,
            "name.first": "Ada"
        },
        "fieldTags": { "skills.stealth.mod": ["skill"], "skills.athletics.mod": ["skill"] },
        "families": { "abilities": { "str": { "mod": 4 } } }
    }))
    .unwrap()
}

fn run_with(text: &str, ctx: &MapContext, limits: Limits) -> String {
    let result = Formula::parse_with_limits(text, limits)
        .map_err(|errors| errors.into_iter().next().unwrap())
        .and_then(|f| f.evaluate(ctx));
    match result {
        Ok(value) => value.to_string(),
        Err(e) => format!(
            "{}@{}..{}",
            e.code,
            u32::from(e.range.start()),
            u32::from(e.range.end())
        ),
    }
}

fn check_table(cases: &[(&str, &str)]) {
    let ctx = context();
    let mut failures = Vec::new();
    for (text, expected) in cases {
        let got = run_with(text, &ctx, Limits::default());
        if got != *expected {
            failures.push(format!("{text:?}: expected {expected}, got {got}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn arithmetic() {
    check_table(&[
        ("1 + 2", "3"),
        ("7 - 10", "-3"),
        ("6 * 7", "42"),
        ("7 % 3", "1"),
        ("-7 % 3", "2"),
        ("7 / 2", "3.5"),
        ("6 / 2", "3.0"),
        ("1 / 3", "0.333333"),
        ("2 / 3", "0.666667"),
        ("0.1 + 0.2", "0.3"),
        ("0.1 + 0.2 == 0.3", "true"),
        ("50 * 0.14", "7.0"),
        ("ceil(50 * 0.14)", "7"),
        ("1 + 0.5", "1.5"),
        ("0.5 * 0.5", "0.25"),
        ("0.000001 * 0.5", "0.000001"),
        ("7.5 % 2", "1.5"),
        ("-self.quantity", "-3"),
        ("-0.5", "-0.5"),
        ("-(1 + 2) * 2", "-6"),
        ("'damage.' + 'fire'", "'damage.fire'"),
        ("1d6 + 1d4 - 1", "1d6 + 1d4 - 1"),
        ("2 + 1d6", "1d6 + 2"),
        ("1d20 - 1d4", "1d20 - 1d4"),
        ("-1d4", "-1d4"),
        ("item.damage + 2", "2d6 + 3"),
        ("1 / 0", "division-by-zero@0..5"),
        ("1 % 0", "division-by-zero@0..5"),
        ("1.5 / 0", "division-by-zero@0..7"),
        ("9223372036854775807 + 1", "arithmetic-overflow@0..23"),
        ("-9223372036854775807 - 2", "arithmetic-overflow@0..24"),
        ("3037000500 * 3037000500", "arithmetic-overflow@0..23"),
        ("9223372036854 * 2.0", "arithmetic-overflow@0..19"),
        ("99999999999999999999", "formula-syntax@0..20"),
        ("'a' + 1", "type-mismatch@0..7"),
        ("1 + 'a'", "type-mismatch@0..7"),
        ("1d6 * 2", "type-mismatch@0..7"),
        ("1d6 + 0.5", "type-mismatch@0..9"),
        ("true + 1", "type-mismatch@0..8"),
        ("-'a'", "type-mismatch@0..4"),
        ("[1] + [2]", "type-mismatch@0..9"),
    ]);
}

#[test]
fn comparison_and_logic() {
    check_table(&[
        ("1 < 2", "true"),
        ("2 <= 2", "true"),
        ("3 > 2.5", "true"),
        ("2.5 >= 3", "false"),
        ("1 == 1.0", "true"),
        ("1 != 1.0", "false"),
        ("'a' == 'a'", "true"),
        ("[1, 'a'] == [1.0, 'a']", "true"),
        ("[1] == [1, 2]", "false"),
        ("participants.target[0] == participants.target[0]", "true"),
        ("1d6 == 1d6", "true"),
        ("null == null", "true"),
        ("1 == '1'", "false"),
        ("'a' < 'b'", "type-mismatch@0..9"),
        ("1d6 < 1d8", "type-mismatch@0..9"),
        ("true && false", "false"),
        ("true || false", "true"),
        ("!true", "false"),
        ("!!true", "true"),
        ("1 && true", "type-mismatch@0..1"),
        ("!1", "type-mismatch@0..2"),
        // Short-circuit: the skipped operand is never evaluated, so it cannot fail.
        ("false && (1 / 0 > 0)", "false"),
        ("true || (1 / 0 > 0)", "true"),
        ("false && flags.missing", "false"),
        ("true && (1 / 0 > 0)", "division-by-zero@9..14"),
        ("true ? 1 : 1 / 0", "1"),
        ("false ? 1 / 0 : 2", "2"),
        ("flags.crit ? 1d6 : 1d4", "1d6"),
        ("1 ? 2 : 3", "type-mismatch@0..1"),
        ("'a' in ['a', 'b']", "true"),
        ("1 in [1.0]", "true"),
        ("'c' in item.tags", "false"),
        ("'a' in 'abc'", "type-mismatch@0..12"),
    ]);
}

#[test]
fn paths_absence_and_has() {
    check_table(&[
        ("self.equipped", "true"),
        ("level.total", "7"),
        ("participants.target[0].ac", "15"),
        ("participants.target[1]", "no-such-key@0..22"),
        ("participants.target[-1]", "no-such-key@0..23"),
        ("has(participants.target[1])", "false"),
        ("has(participants.target[0].ac)", "true"),
        ("flags.unset", "no-such-key@0..11"),
        ("has(flags.unset)", "false"),
        ("has(flags.unset.deeper)", "false"),
        ("has(links.crew)", "false"),
        ("has(flags.x) ? flags.x : 0", "0"),
        ("has(flags.crit) && flags.crit", "true"),
        ("has(1 + 2)", "type-mismatch@4..9"),
        ("has(level.total)", "true"),
        ("has(no.such.field)", "unknown-name@4..17"),
        ("no.such.field", "unknown-name@0..13"),
        ("steps.x", "unknown-name@0..5"),
        ("self.name.first", "type-mismatch@0..15"),
        ("self['equipped']", "true"),
        ("item.tags['a']", "type-mismatch@0..14"),
        ("[10, 20, 30][1]", "20"),
        ("[10, 20, 30][3]", "no-such-key@0..15"),
        ("['a'][0.5]", "type-mismatch@0..10"),
        ("x", "unknown-name@0..1"),
    ]);
}

#[test]
fn functions() {
    check_table(&[
        ("size(item.tags)", "2"),
        ("size('héllo')", "5"),
        ("size(self)", "3"),
        ("size(1)", "type-mismatch@5..6"),
        ("min(2, 1)", "1"),
        ("max(1, 2, 3)", "3"),
        ("max(3, 2.5)", "3.0"),
        ("min(1.5, 2)", "1.5"),
        ("max(1)", "type-mismatch@0..6"),
        ("max(1, 'a')", "type-mismatch@7..10"),
        ("floor(7 / 2)", "3"),
        ("floor(-7 / 2)", "-4"),
        ("ceil(7 / 2)", "4"),
        ("round(7 / 2)", "4"),
        ("round(-7 / 2)", "-4"),
        ("round(2.4)", "2"),
        ("floor(3)", "3"),
        ("floor('3')", "type-mismatch@6..9"),
        ("abs(-3)", "3"),
        ("abs(-1.5)", "1.5"),
        ("string(7)", "'7'"),
        ("string(7.0)", "'7.0'"),
        ("string(true)", "'true'"),
        ("string(1d6 + 1)", "'1d6 + 1'"),
        ("string('a')", "'a'"),
        ("string([1])", "type-mismatch@7..10"),
        ("indexOf(['a', 'b'], 'b')", "1"),
        ("indexOf(['a', 'b'], 'c')", "-1"),
        ("indexOf('ab', 'b')", "type-mismatch@8..12"),
        ("dieOf(item.damage)", "1d6"),
        ("dieOf(3)", "type-mismatch@6..7"),
        ("maxOf(item.damage)", "13"),
        ("minOf(item.damage)", "3"),
        ("maxOf(2d20kh1)", "20"),
        ("maxOf(4d6dl1)", "18"),
        ("minOf(4dF)", "-4"),
        ("maxOf(5d6cs>=5)", "5"),
        ("maxOf(1d20min10 - 1d4)", "19"),
        ("maxOf(4)", "4"),
        ("any([1, 2, 3], x > 2)", "true"),
        ("any([], x > 2)", "false"),
        ("all([1, 2, 3], x > 0)", "true"),
        ("all([1, 2, 3], x > 1)", "false"),
        ("filter([1, 2, 3], x != 2)", "[1, 3]"),
        ("map([1, 2, 3], x * 2)", "[2, 4, 6]"),
        ("map(item.tags, 'tag.' + x)", "['tag.a', 'tag.b']"),
        ("count(item.tags, x == 'a')", "1"),
        ("sum([1, 2, 3])", "6"),
        ("sum([1, 0.5])", "1.5"),
        ("sum([])", "0"),
        ("sum(['a'])", "type-mismatch@4..9"),
        ("any([1], x)", "type-mismatch@9..10"),
        ("map(1, x)", "type-mismatch@4..5"),
        // Nested list functions: the inner `x` shadows the outer one.
        ("map([[1, 2], [3]], sum(map(x, x * 10)))", "[30, 30]"),
        ("countCopies(copy.equipped)", "1"),
        ("countCopies(true)", "3"),
        ("sumCopies(copy.quantity)", "22"),
        ("sumCopies(copy.quantity, !copy.equipped)", "21"),
        (
            "sumCopies(copy.fields.weight, has(copy.fields.weight))",
            "3.05",
        ),
        ("maxCopies(copy.quantity)", "20"),
        ("minCopies(copy.quantity)", "1"),
        ("maxCopies(copy.quantity, copy.quantity > 100)", "0"),
        ("countCopies(copy.id)", "type-mismatch@12..19"),
        ("sumFields('skill' in item.tags)", "11"),
        ("sumFields(true)", "19.5"),
        ("sumFields(false)", "0"),
        ("fieldOf('abilities', 'str', 'mod')", "4"),
        ("fieldOf('abilities', 'dex', 'mod')", "no-such-key@0..34"),
        ("fieldOf('skills', 'str', 'mod')", "unknown-name@0..31"),
        ("fieldOf('abilities', 1, 'mod')", "type-mismatch@21..22"),
        ("frobnicate(1)", "unknown-name@0..10"),
        ("(flags.n)d6kh1", "2d6kh1"),
        ("(flags.n - 2)d6", "0"),
        ("(0 - 1)d6", "type-mismatch@1..6"),
        ("(1.5)d6", "type-mismatch@1..4"),
        ("(5000)d6", "safety-limit-exceeded@1..5"),
        ("5000d6", "safety-limit-exceeded@0..6"),
        ("has(1)", "type-mismatch@4..5"),
        ("has(flags.x, flags.y)", "type-mismatch@0..21"),
    ]);
}

#[test]
fn errors_come_from_the_whole_formula() {
    let errors = Formula::parse("foo(1) + bar(2)").unwrap_err();
    let codes: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        codes,
        [
            "unknown-name at 0..3: no function `foo`",
            "unknown-name at 9..12: no function `bar`"
        ]
    );
    let errors = Formula::parse("1 +").unwrap_err();
    assert!(
        errors
            .iter()
            .all(|e| e.code == ocf_formula::ErrorCode::FormulaSyntax),
        "{errors:?}"
    );
}

#[test]
fn limits_bound_what_a_formula_can_build() {
    let ctx = context();
    let small = Limits {
        max_string_len: 8,
        max_list_len: 3,
        max_steps: 50,
        ..Limits::default()
    };
    for (text, expected) in [
        ("'abcd' + 'efgh'", "'abcdefgh'"),
        ("'abcd' + 'efghi'", "safety-limit-exceeded@0..16"),
        ("string(123456789)", "safety-limit-exceeded@0..17"),
        ("[1, 2, 3]", "[1, 2, 3]"),
        ("[1, 2, 3, 4]", "safety-limit-exceeded@0..12"),
        (
            "map([1, 2, 3], map([1, 2, 3], x))",
            "[[1, 2, 3], [1, 2, 3], [1, 2, 3]]",
        ),
        (
            "map([1, 2, 3], map([1, 2, 3], map([1, 2, 3], x)))",
            "safety-limit-exceeded@38..39",
        ),
    ] {
        assert_eq!(run_with(text, &ctx, small), expected, "{text}");
    }
    let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
    assert!(run_with(&deep, &ctx, Limits::default()).starts_with("safety-limit-exceeded"));
    let long = "1 + ".repeat(2000) + "1";
    assert!(run_with(&long, &ctx, Limits::default()).starts_with("safety-limit-exceeded"));
}

#[test]
fn a_formula_is_evaluated_many_times() {
    let formula = Formula::parse("level.total * 2").unwrap();
    for level in [1, 5, 20] {
        let ctx = MapContext::new().with_field("level.total", ocf_formula::Value::Int(level));
        assert_eq!(
            formula.evaluate(&ctx),
            Ok(ocf_formula::Value::Int(level * 2))
        );
    }
}
