//! The activation walk, copies (EC "Activation": a copy's item and templates, then what it
//! grants and picks, depth first).

use super::*;

impl<'db> Walk<'db> {
    pub(super) fn copy(&mut self, copy: CopyInput) {
        let db = self.db;
        let item = copy.item(db);
        if self.ruleset.item(item).is_none() {
            return;
        }
        let templates = match copy.templates(db).as_slice() {
            [] => no_templates(),
            some => some.into(),
        };
        let entry: Arc<str> = copy.id(db).as_str().into();
        let index = self.push(Activation {
            item: item.as_str().into(),
            via: Via::Copy,
            applied: false,
            parent: None,
            path: None,
            copy: Some(copy),
            applied_entry: None,
            entry: Some(entry.clone()),
            templates: templates.clone(),
            waived: false,
            kept_by: None,
        });
        let tree = copy.choices(db).clone();
        for template in templates.iter() {
            if self.ruleset.item(template).is_none() {
                continue;
            }
            let t = self.push(Activation {
                item: template.as_str().into(),
                via: Via::Template,
                applied: false,
                parent: Some(index),
                path: None,
                copy: Some(copy),
                applied_entry: None,
                entry: Some(entry.clone()),
                templates: templates.clone(),
                waived: false,
                kept_by: None,
            });
            self.follow(t, &tree, Some(template.as_str()), 1);
        }
        self.follow(index, &tree, None, 1);
    }
}
