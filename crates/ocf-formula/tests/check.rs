//! The static type checker: the type of each formula in an environment, or all its errors with
//! their ranges.

use ocf_formula::{Env, Formula, Root, Ty};

fn env() -> Env {
    // A field parameter over fields of several types: `.value` is their union (DA).
    let field_param = Ty::record([
        ("id", Ty::String),
        ("type", Ty::String),
        ("tags", Ty::list(Ty::String)),
        ("value", Ty::union([Ty::Int, Ty::Decimal])),
    ]);
    let copy = Ty::record([
        ("id", Ty::String),
        ("quantity", Ty::Int),
        ("equipped", Ty::Bool),
        ("state", Ty::open_map(Ty::Dyn)),
    ]);
    Env::new()
        .with_root(Root::Params, Ty::record([("stat", field_param)]))
        .with_root(Root::Flags, Ty::open_map(Ty::Dyn))
        .with_root(Root::Participants, Ty::open_map(Ty::list(Ty::Dyn)))
        .with_root(
            Root::Item,
            Ty::record([("tags", Ty::list(Ty::String)), ("name", Ty::String)]),
        )
        .with_field("level.total", Ty::Int)
        .with_field("speed.factor", Ty::Decimal)
        .with_field("weapon.damage", Ty::Dice)
        .with_field("sorcerer.gifts", Ty::list(Ty::String))
        .with_copies(copy)
}

fn check(text: &str, env: &Env) -> String {
    let formula = Formula::parse(text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
    match formula.check(env) {
        Ok(ty) => ty.to_string(),
        Err(errors) => errors
            .iter()
            .map(|e| {
                format!(
                    "{}@{}..{}",
                    e.code,
                    u32::from(e.range.start()),
                    u32::from(e.range.end())
                )
            })
            .collect::<Vec<_>>()
            .join(" "),
    }
}

#[test]
fn types_of_formulas() {
    let env = env();
    let mut failures = Vec::new();
    for (text, expected) in [
        ("1 + 2", "int"),
        ("1 / 2", "decimal"),
        ("1 + 0.5", "decimal"),
        ("level.total * speed.factor", "decimal"),
        ("params.stat.value + 1", "int | decimal"),
        ("params.stat.value > 3", "bool"),
        ("params.stat.tags", "list(string)"),
        ("floor(params.stat.value)", "int"),
        ("weapon.damage + 1", "dice"),
        ("-weapon.damage", "dice"),
        ("dieOf(weapon.damage)", "dice"),
        ("maxOf(weapon.damage)", "int"),
        ("'a' + item.name", "string"),
        ("flags.anything", "dyn"),
        ("flags.anything + 1", "dyn"),
        // A number over a dynamic value is known only when evaluated: dyn, not int | decimal.
        ("max(1, flags.anything)", "dyn"),
        ("floor(flags.anything / 2) + 1", "int"),
        ("flags.crit ? ['a'] : []", "list(string)"),
        ("true ? 1 : 'a'", "int | string"),
        ("map(item.tags, size(x))", "list(int)"),
        ("filter(item.tags, x != 'a')", "list(string)"),
        ("count(item.tags, x == 'a')", "int"),
        ("sum([1, 2])", "int"),
        ("countCopies(copy.equipped)", "int"),
        ("sumCopies(copy.quantity, copy.equipped)", "int"),
        ("sumCopies(copy.state.level, copy.equipped)", "dyn"),
        ("max(1, 2)", "int"),
        ("max(1, 2.5)", "decimal"),
        ("has(flags.x) && flags.x", "bool"),
        ("(level.total)d6", "dice"),
        ("participants.target[0]", "dyn"),
        ("item['tags']", "string | list(string)"),
        ("[1, 'a']", "list(int | string)"),
        // Errors: every one is reported, each with its range.
        ("'a' + 1", "type-mismatch@0..7"),
        ("1 + true && 'a'", "type-mismatch@0..8 type-mismatch@12..15"),
        (
            "steps.x + nope.field + nope2",
            "unknown-name@0..5 unknown-name@10..20 unknown-name@23..28",
        ),
        ("item.nope", "unknown-name@0..9"),
        ("params.stat.value + 'a'", "type-mismatch@0..23"),
        ("has(1 + 2)", "type-mismatch@4..9"),
        // The whole dotted chain is one field ID; parentheses make a member access.
        ("level.total.x", "unknown-name@0..13"),
        ("(level.total).x", "type-mismatch@0..15"),
        ("level.total[0]", "type-mismatch@0..14"),
        ("size(1)", "type-mismatch@5..6"),
        ("max(1)", "type-mismatch@0..6"),
        ("any(item.tags, 1)", "type-mismatch@15..16"),
        ("x", "unknown-name@0..1"),
        ("sumFields(true)", "unknown-name@0..15"),
        ("fieldOf('a', 'b', 'c')", "unknown-name@0..22"),
        ("countCopies(copy.nope)", "unknown-name@12..21"),
        ("'a' in 'abc'", "type-mismatch@7..12"),
        ("1 < 'a'", "type-mismatch@4..7"),
        ("!level.total", "type-mismatch@1..12"),
        ("level.total ? 1 : 2", "type-mismatch@0..11"),
        ("('a')d6", "type-mismatch@1..4"),
        ("string([1])", "type-mismatch@7..10"),
    ] {
        let got = check(text, &env);
        if got != expected {
            failures.push(format!("{text:?}: expected {expected}, got {got}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
