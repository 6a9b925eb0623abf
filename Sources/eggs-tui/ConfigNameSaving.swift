import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension Config {
    /// A TOML basic string holding `text`.
    static func tomlString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// `text` (a config file) with its top-level `name` set to `name`: the `name = …` line
    /// replaced where there is one, else a line added at the top. Every other line (comments
    /// included) is kept as it is.
    static func settingName(_ name: String, in text: String) -> String {
        let line = "name = \(tomlString(name))"
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (index, current) in lines.enumerated() {
            let trimmed = current.drop { $0 == " " || $0 == "\t" }
            if trimmed.hasPrefix("[") { break }  // the first table: no top-level name before it
            let key = trimmed.prefix { $0 != "=" && $0 != " " && $0 != "\t" }
            if key == "name" || key == "\"name\"", trimmed.dropFirst(key.count).drop(while: { $0 == " " || $0 == "\t" }).hasPrefix("=") {
                lines[index] = line
                return lines.joined(separator: "\n")
            }
        }
        return line + "\n" + text
    }

    /// Saves `name` as the player's name in the config file (a name changed in the lobby is kept
    /// for next time). The new file is checked to read back with that name, then replaces the
    /// old one whole (written beside it, then renamed). Returns why it was not saved, or nil.
    static func saveName(_ name: String, path: String = Config.path()) -> String? {
        var text = ""
        switch WholeFile.read(path, limit: fileSizeMax) {
        case .success(let bytes): text = String(decoding: bytes, as: UTF8.self)
        case .failure(.cannotOpen(.noSuchFileOrDirectory)): text = ""
        case .failure(let failure): return "\(path): \(failure.reason)"
        }
        let updated = settingName(name, in: text)
        guard updated.utf8.count <= fileSizeMax else { return "\(path): it would be too large" }
        do {
            let reread = try parse(updated, source: path)
            guard reread.name == name else { return "\(path): the name would not read back" }
        } catch {
            return "\(error)"
        }
        var directory = ""
        for part in path.split(separator: "/").dropLast() {
            directory += "/" + part
            mkdir(directory, 0o755)
        }
        let temporary = path + ".new-\(getpid())"
        do {
            let file = try FileDescriptor.open(temporary, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: [.ownerReadWrite, .groupRead, .otherRead])
            let written = try file.closeAfter { try file.writeAll(Array(updated.utf8)) }
            guard written == updated.utf8.count else { throw Errno.ioError }
            guard rename(temporary, path) == 0 else { throw Errno(rawValue: errno) }
        } catch {
            unlink(temporary)
            return "\(path): \(error)"
        }
        return nil
    }
}
