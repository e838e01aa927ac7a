//! The ruleset's text keys of what it declares, from qualified IDs (i18n.md "Keys"): a front end
//! builds a key here and looks it up with [`super::Texts`].

/// A qualified ID's pack and the rest (`5e-srd-5.1:skills.athletics`); an unqualified ID has no pack.
pub fn split(id: &str) -> (Option<&str>, &str) {
    match id.split_once(':') {
        Some((pack, rest)) => (Some(pack), rest),
        None => (None, id),
    }
}

fn join(pack: Option<&str>, key: String) -> String {
    match pack {
        Some(pack) => format!("{pack}:{key}"),
        None => key,
    }
}

/// `fields.<id>.<leaf>` of a field.
pub fn field(id: &str, leaf: &str) -> String {
    let (pack, id) = split(id);
    join(pack, format!("fields.{id}.{leaf}"))
}

/// `<contentId>.<leaf>` of a content item.
pub fn content(id: &str, leaf: &str) -> String {
    let (pack, id) = split(id);
    join(pack, format!("{id}.{leaf}"))
}

/// `types.<type>.<leaf>` of a content type.
pub fn content_type(name: &str, leaf: &str) -> String {
    let (pack, name) = split(name);
    join(pack, format!("types.{name}.{leaf}"))
}

/// `tags.<tag>.name`.
pub fn tag(tag: &str) -> String {
    let (pack, tag) = split(tag);
    join(pack, format!("tags.{tag}.name"))
}

/// The key root of an action: `actions.<id>` for a rules action (`<pack>:<id>`),
/// `<contentId>.actions.<id>` for an item's (`<pack>:<contentId>#<id>`).
pub fn action_root(id: &str) -> String {
    let (pack, id) = split(id);
    match id.split_once('#') {
        Some((item, action)) => join(pack, format!("{item}.actions.{action}")),
        None => join(pack, format!("actions.{id}")),
    }
}

/// `bands.<set>.<band>.<leaf>`, or `bands.<set>.name` without a band.
pub fn band(set: &str, band: Option<&str>, leaf: &str) -> String {
    let (pack, set) = split(set);
    match band {
        Some(band) => join(pack, format!("bands.{set}.{band}.{leaf}")),
        None => join(pack, format!("bands.{set}.{leaf}")),
    }
}

/// A key under a rules root (`groups`, `situational`, `choices`, `links`, `followUps`,
/// `creation`, `settings`) of a qualified ID: `<root>.<id>.<leaf>`.
pub fn rules(root: &str, id: &str, leaf: &str) -> String {
    let (pack, id) = split(id);
    join(pack, format!("{root}.{id}.{leaf}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_ids() {
        assert_eq!(
            field("5e:skills.athletics.mod", "name"),
            "5e:fields.skills.athletics.mod.name"
        );
        assert_eq!(action_root("5e:weapon-attack"), "5e:actions.weapon-attack");
        assert_eq!(
            action_root("5e:classes.fighter#second-wind"),
            "5e:classes.fighter.actions.second-wind"
        );
        assert_eq!(
            band("fitd:action", Some("crit"), "name"),
            "fitd:bands.action.crit.name"
        );
        assert_eq!(content_type("5e:weapon", "name"), "5e:types.weapon.name");
    }
}
