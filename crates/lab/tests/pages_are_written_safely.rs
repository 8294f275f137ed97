//! `DIR/index.html` and `results.json` are written to a temp file in DIR and renamed: a
//! symlinked `DIR/index.html` is replaced, its target outside DIR untouched, and no temp
//! file is left behind, also when the write fails.

use render::write_file;

#[test]
fn a_symlinked_page_is_replaced_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("victim.txt");
    std::fs::write(&target, "precious").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("index.html");
    std::os::unix::fs::symlink(&target, &page).unwrap();
    write_file(dir.path(), "index.html", b"<html>").unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    assert!(!std::fs::symlink_metadata(&page)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&page).unwrap(), "<html>");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temp file left: {names:?}");
}

#[test]
fn a_failed_write_names_the_file_and_leaves_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let e = write_file(&dir.path().join("sub"), "index.html", b"x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("index.html"), "{e}");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(names.is_empty(), "{names:?}");
}
