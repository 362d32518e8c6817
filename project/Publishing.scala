import scala.xml.{Elem, Node, NodeSeq}
import scala.xml.transform.{RewriteRule, RuleTransformer}

import sbt._
import sbt.Keys._
import sbtassembly.AssemblyPlugin.autoImport._

/**
 * Maven publishing of the connector, so that `spark-submit --packages <organization>:kinesis-spark_2.13:<version>`
 * (Spark 4.x) or `kinesis-spark_2.12` (Spark 3.5) works: the published main jar is the shaded assembly, and the POM
 * lists only what the runtime provides (Spark and Scala, as `provided`), never the dependencies already shaded inside
 * the jar, which Ivy would otherwise fetch and put on the classpath next to Spark's own. sbt's `+` publishes both.
 *
 * {{{
 *   KINESIS_SPARK_PUBLISH_TO=/tmp/repo build/sbt "+connector/publish"   # a Maven repository in a directory
 *   build/sbt "+connector/publishM2"                                   # ~/.m2/repository
 * }}}
 */
object Publishing {
  /** Environment variable naming a directory to publish to as a Maven repository (dev/release.sh and dev/test.sh set it). */
  val PublishToVariable = "KINESIS_SPARK_PUBLISH_TO"

  val settings: Seq[Setting[_]] = Seq(
    // assembly reads the class directories (exportJars is off), so this creates no cycle.
    Compile / packageBin := assembly.value,
    publishMavenStyle := true,
    versionScheme := Some("early-semver"),
    pomIncludeRepository := (_ => false),
    pomPostProcess := { (pom: Node) => OnlyProvidedDependencies.transform(pom).head },
    publishTo := sys.env.get(PublishToVariable).filter(_.nonEmpty)
      .map(dir => ("kinesis-spark-directory" at new File(dir).getAbsoluteFile.toURI.toString): Resolver)
      .orElse(publishTo.value),
    description := "Spark Structured Streaming connector for Amazon Kinesis Data Streams (shaded jar).",
    // What Maven Central requires of every POM (https://central.sonatype.org/publish/requirements/): name,
    // description, URL, licence, developers and SCM. The same URL is in python/pyproject.toml's [project.urls].
    licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0.txt")),
    homepage := Some(url(ProjectUrl)),
    scmInfo := Some(ScmInfo(url(ProjectUrl), s"scm:git:$ProjectUrl.git", s"scm:git:$ProjectUrl.git")),
    developers := List(Developer("kinesis-spark", "the kinesis-spark contributors", "", url(ProjectUrl))),
    organizationName := "the kinesis-spark contributors",
    organizationHomepage := Some(url(ProjectUrl))
  )

  /** Where the project lives: the POM's URL and SCM, and the Python package's project URLs. */
  val ProjectUrl = "https://github.com/kinesis-spark/kinesis-spark"

  /** Keeps the `provided` dependencies and Scala's library (made `provided`: Spark brings its own); drops the rest. */
  private object OnlyProvidedDependencies extends RuleTransformer(new RewriteRule {
    override def transform(node: Node): NodeSeq = node match {
      case dependency: Elem if dependency.label == "dependency" =>
        val scope = (dependency \ "scope").text.trim
        val scala = (dependency \ "groupId").text.trim == "org.scala-lang" &&
          (dependency \ "artifactId").text.trim == "scala-library"
        if (scope == "provided") dependency
        else if (scala) dependency.copy(child = dependency.child.filterNot(_.label == "scope") :+ <scope>provided</scope>)
        else NodeSeq.Empty
      case other => other
    }
  })
}
