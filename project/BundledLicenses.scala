import java.nio.charset.StandardCharsets
import java.util.zip.ZipFile

import scala.collection.JavaConverters._

import sbt._
import sbt.Keys._
import sbtassembly.AssemblyPlugin.autoImport._
import sbtassembly.{MergeStrategy, PathList}

/**
 * The licence and NOTICE texts that the shaded jar must carry for the libraries it bundles: the Apache License 2.0
 * (section 4) asks a redistribution for a copy of the licence and for the NOTICE texts of the works it contains; BSD
 * licences ask a binary redistribution to reproduce the copyright notice and conditions. Generated at build time
 * into the jar's META-INF/:
 *  - `LICENSE`: this project's licence, then every bundled library with the licence its POM declares and the files
 *    under `META-INF/licenses/` that hold its own texts;
 *  - `NOTICE`: this project's NOTICE, then each distinct NOTICE text that the bundled jars carry, with the libraries
 *    it came from;
 *  - `licenses/`: each distinct licence or NOTICE file of the bundled jars, once (about thirty AWS SDK modules carry
 *    the same two files).
 * Texts a library's jar lacks are kept in `project/licenses/<organization or artifact>/` and go with every bundled
 * library of that organization or artifact: Netty's NOTICE and the licences of the code it contains (its jars carry
 * neither; copied from its 4.1 branch), protobuf-java's BSD licence. A library whose licence asks for its text to
 * travel with binaries and that has none, in its jar or kept here, fails the build, naming the library.
 *
 * {{{
 *   build/sbt connector/assembly && unzip -p connector-jvm/target/scala-2.13/kinesis-spark-assembly_*.jar META-INF/LICENSE
 * }}}
 */
object BundledLicenses {
  /** Licences under which a binary may be passed on without any text: Apache-2.0 (its text heads LICENSE),
   * MIT No Attribution (https://spdx.org/licenses/MIT-0.html) and CC0 (public domain dedication). */
  private val NoTextOfTheirOwn = Seq("apache", "mit-0", "cc0")

  /** A licence or NOTICE file at the top of a jar or of its META-INF: LICENSE, NOTICE.txt, and the texts of what a
   * library bundles in turn (jackson-core's FastDoubleParser-LICENSE). */
  private val LicenceFile = """(?i)(META-INF/)?[^/]*(LICENSE|NOTICE)[^/]*""".r

  val settings: Seq[Setting[_]] = Seq(
    Compile / resourceGenerators += Def.task {
      val licences = update.value.configuration(Runtime).toSeq.flatMap(_.modules)
        .map(m => (m.module.organization, m.module.name) -> m.licenses).toMap
      val bundled = (Runtime / externalDependencyClasspath).value.flatMap { entry =>
        entry.get(moduleID.key).filterNot(_.name == "scala-library").map { module =>
          Bundled(module, licences.getOrElse((module.organization, module.name), Vector.empty), entry.data)
        }
      }.sortBy(_.coordinates)
      val root = (ThisBuild / baseDirectory).value
      write((Compile / resourceManaged).value / "META-INF", root, bundled)
    }.taskValue,
    // The bundled jars' own licence and NOTICE files are in META-INF/licenses/ (above); at their usual places they
    // would collide, and META-INF/LICENSE and NOTICE must be the generated ones, which speak for the whole jar.
    assembly / assemblyMergeStrategy := {
      val others = (assembly / assemblyMergeStrategy).value
      (path: String) => path match {
        case "META-INF/LICENSE" | "META-INF/NOTICE" => MergeStrategy.preferProject
        case LicenceFile(_*)                         => MergeStrategy.discard
        case PathList("META-INF", "license", _*)     => MergeStrategy.discard
        case other                                   => others(other)
      }
    },
    // The sources and scaladoc jars carry this project's licence too (Maven Central publishes them beside the jar).
    // They bundle nothing of others: the sources jar, which takes the resources, leaves the generated texts out.
    Compile / packageSrc / mappings := (Compile / packageSrc / mappings).value
      .filterNot { case (_, path) => path.startsWith("META-INF/") } ++ projectTexts((ThisBuild / baseDirectory).value),
    Compile / packageDoc / mappings ++= projectTexts((ThisBuild / baseDirectory).value)
  )

  private def projectTexts(root: File): Seq[(File, String)] =
    Seq(root / "LICENSE" -> "META-INF/LICENSE", root / "NOTICE" -> "META-INF/NOTICE")

  private final case class Bundled(module: ModuleID, licences: Seq[(String, Option[String])], jar: File) {
    def coordinates: String = s"${module.organization}:${module.name}:${module.revision}"
  }

  /** A licence or NOTICE file of a bundled jar, by its path in that jar. */
  private final case class Text(path: String, content: String) {
    def isNotice: Boolean = path.split('/').last.toUpperCase.contains("NOTICE")
  }

  private def texts(jar: File): Seq[Text] = {
    val zip = new ZipFile(jar)
    try {
      zip.entries().asScala.filter(e => !e.isDirectory && LicenceFile.pattern.matcher(e.getName).matches)
        .map(e => Text(e.getName, new String(IO.readBytes(zip.getInputStream(e)), StandardCharsets.UTF_8).trim))
        .toList.sortBy(_.path)
    } finally zip.close()
  }

  private def write(metaInf: File, root: File, bundled: Seq[Bundled]): Seq[File] = {
    val kept = root / "project" / "licenses"
    val carried: Seq[(Bundled, Seq[Text])] = bundled.map { library =>
      val own = texts(library.jar)
      val keptHere = Seq(library.module.organization, library.module.name).map(kept / _).filter(_.isDirectory)
        .flatMap(folder => IO.listFiles(folder).sortBy(_.getName))
        .map(file => Text(file.getName, IO.read(file).trim))
      val needsText = !library.licences.exists { case (name, url) =>
        NoTextOfTheirOwn.exists(n => (name + url.getOrElse("")).toLowerCase.contains(n))
      }
      if (library.licences.isEmpty && own.isEmpty && keptHere.isEmpty)
        sys.error(s"${library.coordinates} names no licence in its POM and carries no licence file: it cannot be " +
          "bundled until its licence is known")
      if (needsText && !(own ++ keptHere).exists(!_.isNotice))
        sys.error(s"${library.coordinates} is bundled under ${library.licences.map(_._1).mkString(", ")}, " +
          "which asks for its text in the jar, but its jar carries none: add it under " +
          s"${(kept / library.module.name).relativeTo(root).get}/")
      library -> (own ++ keptHere)
    }
    // Each distinct text once, named after the first library (by coordinates) that carries it.
    val fileNames: Map[String, String] = carried.flatMap { case (library, own) =>
      own.map(text => text.content -> s"${library.module.name}-${text.path.split('/').last}")
    }.groupBy(_._1).map { case (content, names) => content -> names.head._2 }

    val licenceList = carried.map { case (library, own) =>
      val declared = if (library.licences.isEmpty) "not declared in its POM"
        else library.licences.map { case (name, url) => name + url.fold("")(u => s" ($u)") }.mkString("; ")
      val files = own.map(t => s"META-INF/licenses/${fileNames(t.content)}").distinct
      s"${library.coordinates}\n    Licence: $declared\n" +
        (if (files.isEmpty) "" else s"    Its texts: ${files.mkString(", ")}\n")
    }
    val notices = carried.flatMap { case (library, own) => own.filter(_.isNotice).map(_.content -> library) }
      .groupBy(_._1).toSeq.map { case (content, from) => (from.map(_._2.coordinates).distinct, content) }
      .sortBy(_._1.head)

    val rule = "-" * 100
    val licence = IO.read(root / "LICENSE").stripLineEnd + "\n\n" + rule + "\nLibraries bundled in this jar\n" +
      rule + "\nThis jar contains the classes of the libraries below, relocated under io.kinesisspark.shaded. " +
      "Each remains under\nits own licence, named here as its POM declares it; the licence and NOTICE files that " +
      "its own jar carries\nare in META-INF/licenses/.\n\n" + licenceList.mkString("\n")
    val notice = IO.read(root / "NOTICE").stripLineEnd + "\n\n" + rule + "\nNOTICE texts of the bundled libraries\n" +
      rule + "\n" + notices.map { case (from, content) => s"From ${from.mkString(", ")}:\n\n$content\n" }
        .mkString("\n")

    IO.delete(metaInf / "licenses")
    val written = Seq(metaInf / "LICENSE" -> licence, metaInf / "NOTICE" -> notice) ++
      fileNames.toSeq.map { case (content, name) => metaInf / "licenses" / name -> (content + "\n") }
    written.foreach { case (file, content) => IO.write(file, content, StandardCharsets.UTF_8) }
    written.map(_._1)
  }
}
