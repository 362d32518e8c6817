// kinesis-spark: one connector module, assembled into a shaded jar that the Python package bundles.
// Versions shared with the Python package live in versions.properties (read here and by python/setup.py).
import java.util.Properties

val versions: Properties = {
  val p = new Properties()
  IO.reader(file("versions.properties"))(r => p.load(r))
  p
}
// Two builds from one source tree, one per Scala binary version, each against its own Spark line:
//   build/sbt connector/test connector/assembly                 Spark 4.x, Scala 2.13 (the default)
//   build/sbt "++2.12 connector/test" "++2.12 connector/assembly"  Spark 3.5, Scala 2.12 (the cross build)
// Sources differ only where Spark's API does: src/main/spark-4 and src/main/spark-3.5 (see sparkSourceLine).
val scala213 = versions.getProperty("scala")
val scala212 = versions.getProperty("cross.scala")
def sparkVersionFor(scalaBinary: String): String =
  if (scalaBinary == "2.12") versions.getProperty("cross.spark") else versions.getProperty("spark")
// The folder of Spark-line-specific sources: "spark-3.5" or "spark-4".
def sparkSourceLine(scalaBinary: String): String = if (scalaBinary == "2.12") "spark-3.5" else "spark-4"
// One version for every AWS SDK module the jar bundles.
val awsSdkVersion = "2.57.8"
val shadePrefix = "io.kinesisspark.shaded"

ThisBuild / organization := "io.github.kinesis-spark"
ThisBuild / version := versions.getProperty("kinesis-spark")
ThisBuild / scalaVersion := scala213
ThisBuild / crossScalaVersions := Seq(scala213, scala212)
ThisBuild / javacOptions ++= Seq("--release", "17")
ThisBuild / scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-unchecked")

lazy val root = (project in file("."))
  .aggregate(connector)
  .settings(publish / skip := true, name := "kinesis-spark-root")

lazy val connector = (project in file("connector-jvm"))
  .settings(
    name := "kinesis-spark",
    // 2.12 has no byname-implicit lint to turn off. On 2.13 `import scala.collection.compat._` brings nothing
    // (the standard library has it all), so its unused-import warning is silenced.
    scalacOptions ++= (if (scalaBinaryVersion.value == "2.12") Seq("-Xlint")
                       else Seq("-Xlint:-byname-implicit,_", "-Wconf:origin=scala.collection.compat.*:s")),
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkVersionFor(scalaBinaryVersion.value) % Provided,
      "org.scalatest" %% "scalatest" % "3.2.19" % Test
    ),
    // 2.13 collection methods on 2.12 (minOption, groupMapReduce, scala.jdk.CollectionConverters). Spark 3.5 itself
    // depends on this version of scala-collection-compat, so it is on every Spark 3.5 classpath and no newer API
    // can slip in; on 2.13 the calls compile to the standard library's own methods. Either way nothing of it
    // belongs in the jar or the POM: "compile-internal" puts it on the compile classpath only.
    libraryDependencies += "org.scala-lang.modules" %% "scala-collection-compat" % "2.7.0" % "compile-internal",
    Compile / unmanagedSourceDirectories +=
      (Compile / sourceDirectory).value / sparkSourceLine(scalaBinaryVersion.value),
    Test / unmanagedSourceDirectories +=
      (Test / sourceDirectory).value / sparkSourceLine(scalaBinaryVersion.value),
    // SLF4J comes from Spark at run time; the SDK must not bring a second copy into the shaded jar.
    libraryDependencies ++= Seq(
      "software.amazon.awssdk" % "kinesis" % awsSdkVersion,
      "software.amazon.awssdk" % "sts" % awsSdkVersion,
      // Option kclLeaseTable: a KCL application's lease table is read once, at a query's first start.
      "software.amazon.awssdk" % "dynamodb" % awsSdkVersion,
      "software.amazon.awssdk" % "netty-nio-client" % awsSdkVersion,
      "software.amazon.awssdk" % "apache-client" % awsSdkVersion
    ).map(_.exclude("org.slf4j", "slf4j-api")
      // Clients are built with explicit HTTP clients (Apache's pool for calls, Netty for SubscribeToShard); the
      // SDK's other defaults would be dead weight in the jar.
      .exclude("software.amazon.awssdk", "url-connection-client")
      .exclude("software.amazon.awssdk", "apache5-client")),
    // KPL aggregates are protobuf messages: the codec reads and writes them with protobuf-java's coded streams.
    libraryDependencies += "com.google.protobuf" % "protobuf-java" % "4.33.5",
    Test / fork := true,
    Test / javaOptions ++= Seq("-Xmx2g", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED"),
    Test / parallelExecution := false,
    // One JUnit XML folder per Scala version (target/scala-2.1x/test-reports), so the 2.12 run does not overwrite
    // the 2.13 reports dev/test.sh sums up.
    Test / testReportsDirectory := crossTarget.value / "test-reports",

    // --- the shaded jar ---------------------------------------------------------------------------------
    assembly / assemblyJarName := s"kinesis-spark-assembly_${scalaBinaryVersion.value}-${version.value}.jar",
    assembly / assemblyOption ~= (_.withIncludeScala(false)),
    // The SDK and everything it drags in are relocated so they can never clash with the Netty, Jackson or
    // AWS SDK that Spark, Hadoop or a Databricks/EMR runtime put on the same classpath.
    assembly / assemblyShadeRules := Seq(
      ShadeRule.rename("software.amazon.awssdk.**" -> s"$shadePrefix.awssdk.@1").inAll,
      ShadeRule.rename("software.amazon.eventstream.**" -> s"$shadePrefix.eventstream.@1").inAll,
      ShadeRule.rename("io.netty.**" -> s"$shadePrefix.netty.@1").inAll,
      ShadeRule.rename("com.fasterxml.jackson.**" -> s"$shadePrefix.jackson.@1").inAll,
      ShadeRule.rename("org.reactivestreams.**" -> s"$shadePrefix.reactivestreams.@1").inAll,
      ShadeRule.rename("org.apache.http.**" -> s"$shadePrefix.apachehttp.@1").inAll,
      ShadeRule.rename("org.apache.commons.**" -> s"$shadePrefix.commons.@1").inAll,
      // Spark and Hadoop bring their own protobuf-java, of other versions.
      ShadeRule.rename("com.google.protobuf.**" -> s"$shadePrefix.protobuf.@1").inAll
    ),
    assembly / assemblyMergeStrategy := {
      case PathList("META-INF", "MANIFEST.MF")                    => MergeStrategy.discard
      case PathList("META-INF", "services", _*)                   => MergeStrategy.filterDistinctLines
      case PathList("META-INF", "native", _*)                     => MergeStrategy.discard
      case PathList("META-INF", "native-image", _*)               => MergeStrategy.discard
      case PathList("META-INF", "versions", _*)                   => MergeStrategy.discard
      case PathList("META-INF", "maven", _*)                      => MergeStrategy.discard
      case PathList("META-INF", xs @ _*) if xs.lastOption.exists(n => n.endsWith(".SF") || n.endsWith(".DSA") || n.endsWith(".RSA")) =>
        MergeStrategy.discard
      case "module-info.class"                                    => MergeStrategy.discard
      case PathList("META-INF", "io.netty.versions.properties")   => MergeStrategy.first
      case x if x.endsWith("/module-info.class")                  => MergeStrategy.discard
      // protobuf-java's own .proto sources: not read at run time, and the classes are relocated anyway.
      case PathList("google", "protobuf", _*)                     => MergeStrategy.discard
      case x if x.endsWith(".proto")                              => MergeStrategy.first
      case x => (assembly / assemblyMergeStrategy).value(x)
    },
    assembly / test := {},

    // The option catalog (options/OptionCatalog.scala) as a data file in the jar, written by the compiled object
    // itself so it cannot differ from what the connector checks; dev/build-python.sh copies it into the Python
    // package. Compiled classes and libraries only: the full classpath holds the resources this generates.
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "io" / "kinesisspark" / "options" / "catalog.json"
      val classpath = (Compile / classDirectory).value +: (Compile / dependencyClasspath).value.files
      val _ = (Compile / compile).value
      (Compile / runner).value
        .run("io.kinesisspark.options.OptionCatalog", classpath, Seq(out.getPath), streams.value.log).get
      Seq(out)
    }.taskValue
  )
  // Maven publishing of the shaded jar, for spark-submit --packages (project/Publishing.scala).
  .settings(Publishing.settings)
  // The bundled libraries' licence and NOTICE texts, in the jar's META-INF (project/BundledLicenses.scala).
  .settings(BundledLicenses.settings)

// A tool of the tests, not shipped: checks that every Spark and Scala reference of the connector jar links against
// a Spark line's jars (tests-integration/test_spark_linkage.py runs it for each line). Reads class files with ASM.
lazy val linkageCheck = (project in file("linkage-check"))
  .settings(
    name := "linkage-check",
    crossScalaVersions := Seq(scala213),
    publish / skip := true,
    libraryDependencies += "org.ow2.asm" % "asm" % "9.9",
    assembly / assemblyJarName := "linkage-check.jar",
    assembly / mainClass := Some("io.kinesisspark.linkage.LinkageCheck")
  )

// A tool of the tests, not shipped: a real KCL 2.x application (amazon-kinesis-client from Maven Central) that reads
// a stream on the emulator, checkpoints at given records in a lease table on moto's DynamoDB, and stops; the tests
// of option kclLeaseTable then start the connector from that table (tests-integration/test_kcl_lease_table.py).
lazy val kclConsumer = (project in file("kcl-consumer"))
  .settings(
    name := "kcl-consumer",
    crossScalaVersions := Seq(scala213),
    crossPaths := false,
    autoScalaLibrary := false,
    publish / skip := true,
    libraryDependencies += "software.amazon.kinesis" % "amazon-kinesis-client" % "2.6.1",
    assembly / assemblyJarName := "kcl-consumer.jar",
    assembly / mainClass := Some("io.kinesisspark.kcl.KclConsumer"),
    assembly / assemblyMergeStrategy := {
      case PathList("META-INF", "services", _*) => MergeStrategy.concat
      case PathList("META-INF", _*)             => MergeStrategy.discard
      case x if x.endsWith("module-info.class") => MergeStrategy.discard
      case _                                    => MergeStrategy.first
    }
  )
