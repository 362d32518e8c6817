#!/usr/bin/env bash
# Builds every artifact users install, and uploads them where a release goes. One version for all of them:
# kinesis-spark= in versions.properties (read by build.sbt and python/setup.py).
#
#   dev/release.sh build [DIR]      (DIR defaults to target/release)
#     DIR/maven/       a Maven repository holding kinesis-spark_2.13 (Spark 4) and kinesis-spark_2.12 (Spark 3.5):
#                      the shaded jar, POM (licence, URL, SCM, developers), sources and scaladoc jars, each with
#                      .md5 and .sha1, and a detached signature (.asc) when KINESIS_SPARK_GPG_KEY names a gpg key
#     DIR/central-bundle.zip   the same files as one zip, the bundle Maven Central's Publisher Portal takes
#     DIR/python/      the wheel and the sdist, checked with `twine check --strict`
#   dev/release.sh upload [DIR] [--pypi URL] [--maven URL]
#     twine upload of DIR/python/* to URL (a PyPI upload endpoint; TWINE_USERNAME and TWINE_PASSWORD as twine
#     reads them), and a Maven deploy (maven-deploy-plugin's deploy-file) of each artifact of DIR/maven, with its
#     sources, scaladoc and signatures, to URL (MAVEN_USERNAME and MAVEN_PASSWORD, when set, as the server's
#     credentials); Maven first, since a PyPI upload cannot be undone. For Maven Central: --maven
#     https://ossrh-staging-api.central.sonatype.com/service/local/staging/deploy/maven2/ with a Portal user token
#     (the deploy is then handed to the Portal), or upload DIR/central-bundle.zip in the Portal; for PyPI: --pypi
#     https://upload.pypi.org/legacy/.
#
# build options: --reuse-maven takes DIR/maven as published already by the caller's own sbt run (dev/test.sh
# publishes there in the run that tests the jars, with KINESIS_SPARK_PUBLISH_TO=DIR/maven) instead of starting sbt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

usage() { sed -n '2,21s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
die() { echo "dev/release.sh: $*" >&2; exit 1; }
version="$(sed -n 's/^kinesis-spark *= *//p' versions.properties | tr -d '[:space:]')"
[[ -n "$version" ]] || die "no kinesis-spark= line in versions.properties"

command="${1:-}"
[[ "$command" == build || "$command" == upload ]] || { usage >&2; exit 2; }
shift
dir="$root/target/release"
if [[ $# -gt 0 && "$1" != --* ]]; then dir="$(mkdir -p "$1" && cd "$1" && pwd)"; shift; fi
reuse_maven=false pypi_url="" maven_url=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reuse-maven) reuse_maven=true ;;
    --pypi) pypi_url="${2:?--pypi needs a URL}"; shift ;;
    --maven) maven_url="${2:?--maven needs a URL}"; shift ;;
    *) die "unknown argument '$1' (dev/release.sh build|upload [DIR] ...; -h for help)" ;;
  esac
  shift
done

# twine and build, in an environment of their own (pinned: a release is built the same way each time).
tools="$root/.venv-release"
tools_wanted="twine==7.0.0 build==1.3.0"
if [[ "$(cat "$tools/.requirements" 2>/dev/null)" != "$tools_wanted" ]]; then
  echo "dev/release.sh: installing $tools_wanted into ${tools#"$root"/}" >&2
  python3 -m venv "$tools" >&2
  # shellcheck disable=SC2086  # one requirement per word
  "$tools/bin/python" -m pip install --quiet --disable-pip-version-check $tools_wanted >&2
  echo "$tools_wanted" > "$tools/.requirements"
fi

joined() { local IFS=,; echo "$*"; }
maven_files() { find "$dir/maven" -type f \( -name '*.jar' -o -name '*.pom' \) | sort; }

build() {
  mkdir -p "$dir"
  if ! $reuse_maven; then
    rm -rf "$dir/maven"
    echo "== $(date +%T) dev/release.sh: sbt publish of both Scala lines into ${dir#"$root"/}/maven" >&2
    KINESIS_SPARK_PUBLISH_TO="$dir/maven" build/sbt "+connector/publish" >&2
  fi
  local files
  files="$(maven_files)"
  for scala in 2.12 2.13; do
    for suffix in .jar .pom -sources.jar -javadoc.jar; do
      grep -q "/kinesis-spark_$scala-$version$suffix\$" <<<"$files" \
        || die "$dir/maven lacks kinesis-spark_$scala-$version$suffix (was it published?)"
    done
  done
  # Signatures: Maven Central refuses files without one. gpg's own configuration (GNUPGHOME, an agent, a
  # passphrase) applies; KINESIS_SPARK_GPG_KEY only picks the key.
  find "$dir/maven" -name '*.asc' -delete
  if [[ -n "${KINESIS_SPARK_GPG_KEY:-}" ]]; then
    while read -r file; do
      gpg --batch --yes --local-user "$KINESIS_SPARK_GPG_KEY" --armor --detach-sign "$file"
    done <<<"$files"
    echo "dev/release.sh: signed $(wc -l <<<"$files") files with key $KINESIS_SPARK_GPG_KEY" >&2
  else
    echo "dev/release.sh: KINESIS_SPARK_GPG_KEY is not set: the Maven files are not signed (Maven Central needs it)" >&2
  fi
  # The checksums of every file, signatures included, as the Portal's bundle wants them.
  find "$dir/maven" -type f \( -name '*.md5' -o -name '*.sha1' \) -delete
  local checksummed
  checksummed="$(find "$dir/maven" -type f | sort)"  # listed before any checksum file is written
  while IFS= read -r file; do
    md5sum "$file" | cut -d' ' -f1 | tr -d '\n' > "$file.md5"
    sha1sum "$file" | cut -d' ' -f1 | tr -d '\n' > "$file.sha1"
  done <<<"$checksummed"
  rm -f "$dir/central-bundle.zip"
  (cd "$dir/maven" && "$tools/bin/python" -m zipfile -c "$dir/central-bundle.zip" io)

  echo "== $(date +%T) dev/release.sh: wheel and sdist" >&2
  for scala in 2.12 2.13; do
    jar="connector-jvm/target/scala-$scala/kinesis-spark-assembly_$scala-$version.jar"
    [[ -f "$jar" ]] || die "$jar not found: build it with build/sbt connector/assembly \"++2.12 connector/assembly\""
  done
  # The jars the wheel bundles must be the ones the Maven artifacts carry (--reuse-maven takes them as built).
  for scala in 2.12 2.13; do
    cmp -s "connector-jvm/target/scala-$scala/kinesis-spark-assembly_$scala-$version.jar" \
      "$dir/maven/io/github/kinesis-spark/kinesis-spark_$scala/$version/kinesis-spark_$scala-$version.jar" \
      || die "the Scala $scala assembly jar differs from the one in $dir/maven: build both in one run"
  done
  # python -m build makes the sdist, then the wheel from the sdist, as pip does from PyPI. It holds the lock
  # dev/python-env.sh takes for its editable installs, which write into python/ too (dev/test.sh makes the
  # environments while this runs). (&&: set -e does not apply inside a subshell on the left of ||.)
  rm -f "$dir/python-build.log"
  (
    flock 9 && bash dev/build-python.sh && rm -rf "$dir/python" "$root/python/build" &&
      "$tools/bin/python" -m build --outdir "$dir/python" "$root/python" >"$dir/python-build.log" 2>&1
  ) 9>"$root/.venv-tools.lock" \
    || { cat "$dir/python-build.log" >&2 2>/dev/null || true; die "building the wheel and sdist failed"; }
  "$tools/bin/twine" check --strict "$dir/python/"* >&2
  { find "$dir/python" -type f; echo "$dir/central-bundle.zip"; find "$dir/maven" -name "*.pom"; } | sort
}

# Maven Central's Portal takes a deploy through its OSSRH staging API, then a request that moves what was deployed
# into a Portal deployment (https://central.sonatype.org/publish/publish-portal-ossrh-staging-api/).
central_staging="https://ossrh-staging-api.central.sonatype.com"

maven_deploy() {
  command -v mvn >/dev/null || die "the Maven deploy needs mvn (dev/prerequisites.sh installs it)"
  local settings=()
  if [[ -n "${MAVEN_USERNAME:-}" || -n "${MAVEN_PASSWORD:-}" ]]; then
    [[ -n "${MAVEN_USERNAME:-}" && -n "${MAVEN_PASSWORD:-}" ]] || die "set both MAVEN_USERNAME and MAVEN_PASSWORD, or neither"
    # The credentials stay in the environment: Maven reads ${env.*} in settings.xml when it needs them.
    settings=(--settings "$dir/deploy-settings.xml")
    cat > "$dir/deploy-settings.xml" <<'XML'
<settings><servers><server><id>kinesis-spark-release</id>
  <username>${env.MAVEN_USERNAME}</username><password>${env.MAVEN_PASSWORD}</password>
</server></servers></settings>
XML
  fi
  local poms pom base args suffix files classifiers types
  poms="$(find "$dir/maven" -name '*.pom' | sort)"
  while IFS= read -r pom; do
    base="${pom%.pom}"
    args=(-Durl="$maven_url" -DrepositoryId=kinesis-spark-release -DpomFile="$pom" -Dfile="$base.jar"
          -Dsources="$base-sources.jar" -Djavadoc="$base-javadoc.jar")
    if [[ -f "$base.jar.asc" ]]; then
      files=() classifiers=() types=()
      for suffix in .jar.asc .pom.asc -sources.jar.asc -javadoc.jar.asc; do
        files+=("$base$suffix")
        case "$suffix" in
          -sources*) classifiers+=(sources) ;;
          -javadoc*) classifiers+=(javadoc) ;;
          *) classifiers+=("") ;;
        esac
        types+=("${suffix#*.}")
      done
      args+=(-Dfiles="$(joined "${files[@]}")" -Dclassifiers="$(joined "${classifiers[@]}")"
             -Dtypes="$(joined "${types[@]}")")
    fi
    echo "== $(date +%T) dev/release.sh: Maven deploy of $(basename "$base")" >&2
    mvn --batch-mode --no-transfer-progress "${settings[@]}" \
      org.apache.maven.plugins:maven-deploy-plugin:3.1.4:deploy-file "${args[@]}" >&2
  done <<<"$poms"
  if [[ "$maven_url" == "$central_staging"/* ]]; then
    local namespace
    namespace="$(sed -n 's/^ThisBuild \/ organization := "\(.*\)"$/\1/p' build.sbt)"
    echo "== $(date +%T) dev/release.sh: handing the deploy to the Central Portal (namespace $namespace)" >&2
    # The token goes to curl on stdin, never on its command line (visible to every user of the machine).
    printf 'header = "Authorization: Bearer %s"\n' "$(printf '%s:%s' "$MAVEN_USERNAME" "$MAVEN_PASSWORD" | base64 -w0)" |
      curl --silent --show-error --fail --config - -X POST \
        "$central_staging/manual/upload/defaultRepository/$namespace" >&2
  fi
}

upload() {
  [[ -n "$pypi_url$maven_url" ]] || die "upload needs --pypi URL, --maven URL or both"
  [[ -d "$dir/python" && -d "$dir/maven" ]] || die "$dir holds no release: run dev/release.sh build first"
  # Maven first: a staged Maven deploy can still be dropped, a file uploaded to PyPI can never be uploaded again.
  [[ -z "$maven_url" ]] || maven_deploy
  if [[ -n "$pypi_url" ]]; then
    echo "== $(date +%T) dev/release.sh: twine upload" >&2
    "$tools/bin/twine" upload --non-interactive --disable-progress-bar --repository-url "$pypi_url" "$dir/python/"* >&2
  fi
}

"$command"
