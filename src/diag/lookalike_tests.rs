//! Look-alikes: named, and read as the ASCII they look like.

use super::*;

#[test]
fn a_cyrillic_letter_in_a_name_is_named_and_read_as_its_look_alike() {
    let name = "d\u{435}vex";
    assert_eq!(skeleton(name).as_deref(), Some("devex"));
    assert_eq!(skeleton("devex"), None);
    assert_eq!(
        first_non_ascii(name).as_deref(),
        Some("its character 2 is `\u{435}` (U+0435), not ASCII, which looks like `e`")
    );
    assert_eq!(
        first_non_ascii("caf\u{e9}").as_deref(),
        Some("its character 4 is `\u{e9}` (U+00E9), not ASCII")
    );
    assert_eq!(first_non_ascii("plain"), None);
    assert_eq!(skeleton("ｔｅａｍ１").as_deref(), Some("team1"));
}
