// Help text columns, shared by every program's --help.

/// Two columns, the second aligned and wrapped so lines stay within `columns`; a first column
/// wider than `firstColumnLimit` puts its help on the next line.
package func helpTable(_ rows: [(String, String)], columns: Int = 78, firstColumnLimit: Int = 34) -> String {
  let width = min((rows.map(\.0.count).max() ?? 0) + 2, firstColumnLimit)
  var text = ""
  for (left, right) in rows {
    let lead = "  " + left
    let indent = String(repeating: " ", count: width + 2)
    var lines = wrap(right, width: columns - indent.count)
    let first = lines.isEmpty ? "" : lines.removeFirst()
    if lead.count < indent.count {
      text += lead + String(repeating: " ", count: indent.count - lead.count) + first + "\n"
    } else {
      text += lead + "\n" + indent + first + "\n"
    }
    for line in lines { text += indent + line + "\n" }
  }
  return text
}

private func wrap(_ text: String, width: Int) -> [String] {
  var lines: [String] = []
  var line = ""
  for word in text.split(separator: " ") {
    if !line.isEmpty, line.count + 1 + word.count > width {
      lines.append(line)
      line = ""
    }
    line += line.isEmpty ? String(word) : " " + word
  }
  if !line.isEmpty { lines.append(line) }
  return lines
}
