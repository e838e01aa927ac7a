//! A field's instances (EC "Field values": "To compute field F", its effects; EC "Effects on a set
//! of fields": a field whose tags are computed is matched when it is computed): whether the field
//! has any (its mask, through the map), and whether each stands on it given its tags on this sheet.

use ocf_formula::{MapContext, Root, Value};
use ocf_model::Target;

use crate::context::has_computed_tags;
use crate::db::{CharacterInput, FieldTable, Instance, MaskKey, fields_with_instances};
use crate::targets::FIELDS_PER_MASK;

/// Whether the `place`th field of the character's ruleset has instances: never, when no effect
/// can target it ([`crate::targets`]), else as its mask says ([`fields_with_instances`]), the
/// mask's key from the character's table of keys when there is one.
pub(crate) fn has_instances(
    db: &dyn salsa::Database,
    character: CharacterInput,
    place: usize,
    table: Option<&FieldTable<'_>>,
) -> bool {
    let (slot, key) = match table {
        Some(table) => match table.mask(place) {
            Some(found) => found,
            None => return false,
        },
        None => {
            let targets = crate::formula::targets(character.ruleset(db).ruleset(db));
            let Some(slot) = targets.slot(place) else {
                return false;
            };
            let chunk = (slot / FIELDS_PER_MASK) as u32;
            (slot, MaskKey::new(db, character, chunk))
        }
    };
    fields_with_instances(db, key) & (1 << (slot % FIELDS_PER_MASK)) != 0
}

/// Whether `instance` stands on its field given the field's tags on this sheet. An instance of an
/// effect on a set of fields reaching a field with computed tags exists only when the `where`
/// holds with those tags (EF, "Targets": "the effect has an instance on it on that sheet when
/// `where` holds, and none otherwise"); every other instance stands.
pub fn stands_on_tags(ruleset: &ocf_model::Ruleset, instance: &Instance, tags: &[String]) -> bool {
    let Target::Fields { fields } = &instance.effect.target else {
        return true;
    };
    let Some((id, decl)) = instance
        .field
        .as_deref()
        .and_then(|f| ruleset.fields.get(f).map(|d| (f, d)))
    else {
        return true;
    };
    if !has_computed_tags(decl) {
        return true;
    }
    let Ok(formula) = ocf_formula::Formula::parse(fields.r#where.0.as_str()) else {
        return false;
    };
    let tags = tags.iter().map(|t| Value::string(t.as_str())).collect();
    let mut ctx = MapContext::new().with_root(
        Root::Item,
        crate::context::field_view_with_tags(id, decl, tags),
    );
    if let Some(pick) = &instance.pick {
        ctx = ctx.with_root(Root::Pick, pick.clone());
    }
    if let Some(slot) = instance.slot {
        ctx = ctx.with_root(Root::Slot, Value::Int(slot));
    }
    matches!(formula.evaluate(&ctx), Ok(Value::Bool(true)))
}
