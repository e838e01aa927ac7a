//! Each copy's computed values (EC, computeSheet "Computed values") and its name (`copyNames`).
//! Worked out after the fields (fields never read computed values), so they sit on no loop.

use ocf_formula::{ErrorCode, Value};
use ocf_model::{ComputedDecl, ComputedType};

use crate::context::{Bindings, Mode, SelfRef, SheetContext};
use crate::db::{CharacterInput, CopyInput, ItemKey, copy_self};

/// A copy's computed values in declaration order, and the `formula-error`s of those that failed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Computed {
    pub values: Vec<(String, Value)>,
    /// `(name, cause)` of each value that failed or had the wrong type.
    pub errors: Vec<(String, String)>,
}

/// The copy's computed values: the content type's names, then the item's and each template's, a
/// later declaration replacing an earlier one in its place. Each sees `self` with the values
/// before it, and every field.
pub(crate) fn computed_values_query(
    db: &dyn salsa::Database,
    character: CharacterInput,
    copy: CopyInput,
) -> Computed {
    let ruleset = character.ruleset(db).ruleset(db);
    let Some(entry) = ruleset.item(copy.item(db)) else {
        return Computed::default();
    };
    // (name, declaration, pack), in place order.
    let mut decls: Vec<(&str, &ComputedDecl, &str)> = Vec::new();
    fn declare<'a>(
        list: &mut Vec<(&'a str, &'a ComputedDecl, &'a str)>,
        name: &'a str,
        decl: &'a ComputedDecl,
        pack: &'a str,
    ) {
        match list.iter_mut().find(|(n, _, _)| *n == name) {
            Some(slot) => *slot = (name, decl, pack),
            None => list.push((name, decl, pack)),
        }
    }
    if let Some(t) = entry.type_name().and_then(|t| ruleset.content_type(t)) {
        for (name, decl) in t.decl.computed.iter() {
            declare(&mut decls, name, decl, t.pack.as_str());
        }
    }
    for (name, decl) in entry.item.computed.iter() {
        declare(&mut decls, name, decl, entry.pack_of("computed"));
    }
    for template in copy.templates(db).iter() {
        if let Some(t) = ruleset.item(template) {
            for (name, decl) in t.item.computed.iter() {
                declare(&mut decls, name, decl, t.pack_of("computed"));
            }
        }
    }
    let mut out = Computed::default();
    if decls.is_empty() {
        // Read nothing of the copy, so its edits don't re-run this.
        return out;
    }
    let base_self = copy_self(db, character, copy).clone();
    for (name, decl, pack) in decls {
        // `self` has the values worked out before this one; one that failed is absent.
        let self_value = match &base_self {
            Value::Map(m) => {
                let mut m = (**m).clone();
                for (n, v) in &out.values {
                    m.insert(n.as_str().into(), v.clone());
                }
                Value::Map(std::sync::Arc::new(m))
            }
            other => other.clone(),
        };
        let bindings = Bindings {
            pack,
            self_ref: SelfRef::Value(self_value),
            item: Some(ItemKey::of_copy(db, copy)),
            pick: None,
            entry: None,
            slot: None,
        };
        let ctx = SheetContext::new(db, character, Mode::Sheet, bindings);
        let result = ctx
            .evaluate(decl.formula.as_str())
            .map_err(|e| e.code.as_str().to_owned())
            .and_then(|v| {
                typed(v, decl.r#type).ok_or_else(|| ErrorCode::TypeMismatch.as_str().to_owned())
            });
        match result {
            Ok(value) => out.values.push((name.to_owned(), value)),
            Err(cause) => out.errors.push((name.to_owned(), cause)),
        }
    }
    out
}

/// A computed value of its declared type: an int becomes a decimal for a `decimal` value.
fn typed(value: Value, ty: ComputedType) -> Option<Value> {
    match (ty, value) {
        (ComputedType::Integer, v @ Value::Int(_)) => Some(v),
        (ComputedType::Decimal, Value::Int(n)) => {
            ocf_formula::Decimal::from_int(n).ok().map(Value::Decimal)
        }
        (ComputedType::Decimal, v @ Value::Decimal(_)) => Some(v),
        (ComputedType::Boolean, v @ Value::Bool(_)) => Some(v),
        (ComputedType::String, v @ Value::String(_)) => Some(v),
        _ => None,
    }
}

/// The copy's name for `copyNames`: the state key its item's `nameFrom` (else its type's) names,
/// when that is a string not only of spaces.
pub fn copy_name(
    db: &dyn salsa::Database,
    character: CharacterInput,
    copy: CopyInput,
) -> Option<String> {
    let ruleset = copy.ruleset(db).ruleset(db);
    let entry = ruleset.item(copy.item(db))?;
    let key = entry.item.name_from.clone().or_else(|| {
        entry
            .type_name()
            .and_then(|t| ruleset.content_type(t))
            .and_then(|t| t.decl.name_from.clone())
    })?;
    match copy_self(db, character, copy) {
        Value::Map(m) => match m.get(key.as_str()) {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.to_string()),
            _ => None,
        },
        _ => None,
    }
}
