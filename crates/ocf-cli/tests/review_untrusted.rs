//! Issue 10 reviewed as an attacker's input would come: each refusal has its code (and a place),
//! whatever the input's size.

use std::process::Command;

fn ocf(args: &[&str]) -> (String, i32) {
    let output = Command::new(env!("CARGO_BIN_EXE_ocf"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .env_remove("RUST_LOG")
        .output()
        .expect("ocf runs");
    let mut text = String::from_utf8(output.stdout).unwrap();
    text.push_str(&String::from_utf8(output.stderr).unwrap());
    (text, output.status.code().unwrap_or(-1))
}

/// Issue 10: "Every `ocf roll --distribution` answers or refuses with a code ... within about a
/// second, by a work bound counted in operations". Keeping a few of dice with very many faces was
/// refused only after the estimate of the work had itself taken seconds (quadratic in the faces).
#[test]
fn review_keep_of_dice_with_many_faces_is_refused_with_a_code() {
    for notation in ["2d20000kh1", "1000d20000kh1", "100d20000kl1"] {
        let (text, status) = ocf(&["roll", "--distribution", notation]);
        assert_eq!(status, 1, "{notation}: {text}");
        assert!(
            text.starts_with("ocf: distribution-too-large"),
            "{notation}: {text}"
        );
    }
}
