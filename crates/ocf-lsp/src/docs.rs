//! What the hover says of the formula language's functions and context roots: each function's
//! signature and meaning (docs/spec/formulas.md "Functions"), each root's members and where it is
//! bound (the catalogue's §1.7).

use ocf_formula::{Function, Root};

/// The signature and meaning of a function, by its name.
pub fn function(function: Function) -> (&'static str, &'static str) {
    match function.as_str() {
        "has" => ("has(path) -> bool", "whether the path is present"),
        "size" => (
            "size(v: list | map | string) -> int",
            "elements, members or characters",
        ),
        "min" => (
            "min(a, b, ...) -> number",
            "the least of two or more numbers: an int if all are ints, else a decimal",
        ),
        "max" => (
            "max(a, b, ...) -> number",
            "the greatest of two or more numbers: an int if all are ints, else a decimal",
        ),
        "floor" => ("floor(n: number) -> int", "rounds down"),
        "ceil" => ("ceil(n: number) -> int", "rounds up"),
        "round" => ("round(n: number) -> int", "rounds half away from zero"),
        "abs" => (
            "abs(n: number) -> number",
            "the absolute value, of the same type",
        ),
        "string" => (
            "string(v: int | decimal | bool | string | dice) -> string",
            "its text: '7', '7.0', 'true', '2d6 + 1'",
        ),
        "indexOf" => (
            "indexOf(list, v) -> int",
            "the first index of an equal element, -1 if none",
        ),
        "dieOf" => (
            "dieOf(d: dice) -> dice",
            "one die of the first term, without sign or modifiers; no dice gives 0",
        ),
        "maxOf" => (
            "maxOf(d: dice | int) -> int",
            "the highest total of one roll of each die, without rolling",
        ),
        "minOf" => (
            "minOf(d: dice | int) -> int",
            "the lowest total of one roll of each die, without rolling",
        ),
        "any" => (
            "any(list, cond: bool with x) -> bool",
            "whether `cond` holds for some element (`x`); stops at the first that does",
        ),
        "all" => (
            "all(list, cond: bool with x) -> bool",
            "whether `cond` holds for every element (`x`); stops at the first that does not",
        ),
        "filter" => (
            "filter(list, cond: bool with x) -> list",
            "the elements (`x`) for which `cond` holds",
        ),
        "map" => (
            "map(list, expr: any with x) -> list",
            "the values of `expr` for each element `x`",
        ),
        "count" => (
            "count(list, cond: bool with x) -> int",
            "how many elements (`x`) `cond` holds for",
        ),
        "sum" => (
            "sum(list of numbers) -> number",
            "an int if all are ints, else a decimal; [] gives 0",
        ),
        "countCopies" => (
            "countCopies(cond: bool with copy) -> int",
            "the copies (inventory, then features) for which `cond` holds",
        ),
        "sumCopies" => (
            "sumCopies(value: number with copy[, cond]) -> number",
            "the sum of `value` over the copies (for which `cond` holds)",
        ),
        "maxCopies" => (
            "maxCopies(value: number with copy[, cond]) -> number",
            "the greatest `value` over the copies; 0 when no copy matches",
        ),
        "minCopies" => (
            "minCopies(value: number with copy[, cond]) -> number",
            "the least `value` over the copies; 0 when no copy matches",
        ),
        "sumFields" => (
            "sumFields(cond: bool with item) -> number",
            "the sum of the number fields whose view `{ id, type, tags }` (`item`) matches",
        ),
        "fieldOf" => (
            "fieldOf(family: string, value: string, field: string) -> any",
            "the field `field` of a family's value, in the pack that added it",
        ),
        _ => (
            "",
            "a function of the formula language (docs/spec/formulas.md)",
        ),
    }
}

/// What a context root holds, its members, and where it is bound.
pub fn root(root: Root) -> (&'static str, &'static [&'static str]) {
    match root {
        Root::SelfCopy => (
            "the copy carrying the formula (in effects, content actions, copy queries, computed values)",
            &["id", "equipped", "quantity", "templates"],
        ),
        Root::Item => (
            "the item, merged with the copy's templates; rebound to the candidate in queries",
            &["id", "type", "tags"],
        ),
        Root::Base => (
            "the base item alone, in a template's formulas",
            &["id", "type", "tags"],
        ),
        Root::Prior => (
            "the item as merged before this template, in a template's field values",
            &["id", "type", "tags"],
        ),
        Root::Character => (
            "the character: whether it is being created, its inventory, features and applied entries",
            &["creating", "inventory", "features", "applied", "id"],
        ),
        Root::Links => (
            "`links.<slot>`: the linked character's view, absent when the slot is empty",
            &[],
        ),
        Root::Params => ("`params.<name>`: an action's parameters", &[]),
        Root::Situational => (
            "`situational.<id>`: the situational choices, in actions",
            &[],
        ),
        Root::Participants => (
            "`participants.<role>`: lists of participant views, in actions",
            &[],
        ),
        Root::Participant => ("the current participant's view, in an `each` step", &["id"]),
        Root::Steps => (
            "`steps.<id>.<result member>`: earlier steps' results, in actions",
            &[],
        ),
        Root::Flags => (
            "`flags.<name>`: set by branch cases and picked options, in actions",
            &[],
        ),
        Root::Action => ("the action around the formula", &["item", "self", "step"]),
        Root::Roll => (
            "in roll effects the roll's item, self and tags; in bands the step's result",
            &[
                "total",
                "value",
                "unbounded",
                "kept",
                "empty",
                "tallies",
                "item",
                "self",
                "tags",
            ],
        ),
        Root::Incoming => (
            "the incoming change, in incoming-change effects",
            &["amount", "field", "tags"],
        ),
        Root::Pick => (
            "the pick being applied, in a choice's effects",
            &["value", "id"],
        ),
        Root::Slot => ("the slot number of a slotted choice", &[]),
        Root::Picks => (
            "how many times this step has already picked the candidate or option",
            &[],
        ),
        Root::Options => (
            "the source's offered option IDs, in a choice step's `recommend`",
            &[],
        ),
        Root::Choice => ("the pending choice being asked", &["path", "owner", "id"]),
        Root::Picked => (
            "what was picked, in a choice step's `changes`",
            &["id", "item", "self", "path"],
        ),
        Root::Change => ("a held change record, in `release.where`", &["tags"]),
        Root::X => ("the current element, in list functions and `forEach`", &[]),
        Root::Part => (
            "the group being split, in a `split` adjust's `by`",
            &["total", "tag"],
        ),
        Root::Batch => ("what the applyChanges batch did", &[]),
        Root::Entry => (
            "the candidate applied entry, in an immunity query's `where`",
            &["id", "by"],
        ),
        Root::Copy => (
            "each copy, in the copy aggregates",
            &[
                "id",
                "item",
                "type",
                "equipped",
                "quantity",
                "state",
                "tags",
                "templates",
                "fields",
            ],
        ),
        Root::Field => (
            "the field being allocated, in an allocate's `limit` and `cost`",
            &["id", "value"],
        ),
        Root::Amount => ("the amount being costed, in an allocate's `cost`", &[]),
    }
}
