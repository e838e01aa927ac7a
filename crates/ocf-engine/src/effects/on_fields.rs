//! Effects on a set of fields (EF "Targets", EC "Effects on a set of fields"): the fields a
//! `{ fields: { where } }` target reaches, worked out once per ruleset. Whether an instance stands
//! on a field whose tags are computed is the field's to judge ([`crate::field::stands_on_tags`]).

use ocf_formula::{MapContext, Root, Value};

use super::RulesetInput;
use crate::context::{field_view, has_computed_tags};

/// The key of [`matching_fields`]: a set-of-fields `where`, and whether the effect grants (then it
/// matches `set` fields, else `integer` and `decimal` ones).
#[salsa::interned(debug, revisions = usize::MAX)]
pub struct FieldsWhere<'db> {
    #[returns(copy)]
    pub ruleset: RulesetInput,
    #[returns(ref)]
    pub text: String,
    #[returns(copy)]
    pub grant: bool,
    /// `pick`, for a choice's effect (its `where` may read it).
    #[returns(ref)]
    pub pick: Option<Value>,
    /// `slot`, for a slotted choice's effect.
    #[returns(copy)]
    pub slot: Option<i64>,
}

/// The fields a set-of-fields target reaches, in ruleset field order (EF, "Targets"). It reads
/// only the ruleset, so it is worked out once per ruleset, whatever the character.
pub(crate) fn matching_fields_query<'db>(
    db: &'db dyn salsa::Database,
    key: FieldsWhere<'db>,
) -> Vec<String> {
    let ruleset = key.ruleset(db).ruleset(db);
    let Ok(formula) = crate::formula::parse_in(ruleset, key.text(db)) else {
        return Vec::new();
    };
    use ocf_model::FieldType::*;
    ruleset
        .fields
        .iter()
        .filter(|(_, decl)| match decl.decl.r#type {
            Set => key.grant(db),
            Integer | Decimal => !key.grant(db),
            _ => false,
        })
        .filter(|(id, decl)| {
            // A field with computed tags is matched on each sheet by its tags there.
            if has_computed_tags(decl) {
                return true;
            }
            let mut ctx = MapContext::new().with_root(Root::Item, field_view(id, decl));
            if let Some(pick) = key.pick(db) {
                ctx = ctx.with_root(Root::Pick, pick.clone());
            }
            if let Some(slot) = key.slot(db) {
                ctx = ctx.with_root(Root::Slot, Value::Int(slot));
            }
            matches!(formula.evaluate(&ctx), Ok(Value::Bool(true)))
        })
        .map(|(id, _)| id.to_owned())
        .collect()
}
