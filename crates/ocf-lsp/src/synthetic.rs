//! A generated pack of many files, for the incremental test and the benchmark: `pack.yaml`, rules
//! files each declaring ten fields (every field after the first file reads one of the file before),
//! and content files each holding one item of a declared content type.

/// The files of a pack of `rules` rules files and `content` content files, named as in a folder.
pub fn pack(rules: usize, content: usize) -> Vec<(String, String)> {
    let mut files = vec![(
        "pack.yaml".to_owned(),
        "id: big\nversion: 1.0.0\nspecVersion: 1.0.0\n".to_owned(),
    )];
    for r in 0..rules {
        let mut text = String::new();
        if r == 0 {
            text.push_str("tags: [gen]\ncontentTypes:\n  thing:\n    fields:\n      power: { type: integer }\n");
        }
        text.push_str("fields:\n");
        for f in 0..10 {
            let formula = if r == 0 {
                format!("{f} + 1")
            } else {
                format!("f{}.v{f} + {r}", r - 1)
            };
            text.push_str(&format!(
                "  f{r}.v{f}:\n    type: integer\n    formula: {formula}\n    tags: [gen]\n"
            ));
        }
        files.push((format!("rules/r{r:03}.yaml"), text));
    }
    for c in 0..content {
        files.push((
            format!("content/c{c:03}.yaml"),
            format!(
                "id: thing{c}\ntype: thing\ntags: [gen]\nfields: {{ power: {c} }}\neffects:\n  - {{ target: f0.v{}, op: add, value: item.power + 1 }}\n",
                c % 10
            ),
        ));
    }
    files
}
