#!/bin/bash
# Regenerates the sysfs fixture trees (run from this directory).
# card FIXTURE ADDR DEVICE SUBSYS CARDTYPE SERIAL TEMP_MILLI POWER_MICRO
set -e
card() {
  local d="$1/sys/bus/pci/devices/$2"
  mkdir -p "$d"
  echo 0x1e52 > "$d/vendor"; echo "$3" > "$d/device"
  echo 0x1e52 > "$d/subsystem_vendor"; echo "$4" > "$d/subsystem_device"
  echo 16.0 GT/s PCIe > "$d/current_link_speed"; echo 16 > "$d/current_link_width"
  if [ -n "$5" ]; then
    local k="$d/tenstorrent/tenstorrent!$6"
    mkdir -p "$k"
    echo "$5" > "$k/tt_card_type"; echo "$7" > "$k/tt_serial"
    echo 1000 > "$k/tt_aiclk"; echo 540 > "$k/tt_axiclk"; echo 540 > "$k/tt_arcclk"
    echo 80.17.0.0 > "$k/tt_fw_bundle_ver"; echo 2.33.0.0 > "$k/tt_arc_fw_ver"
    echo 0.14.0.0 > "$k/tt_m3app_fw_ver"
    if [ "$3" = 0x401e ]; then echo 6.15.0 > "$k/tt_eth_fw_ver"; echo 5.6.0.0 > "$k/tt_m3bl_fw_ver"; fi
  fi
  if [ -n "$8" ]; then mkdir -p "$d/hwmon/hwmon3"; echo "$8" > "$d/hwmon/hwmon3/temp1_input"; echo "$9" > "$d/hwmon/hwmon3/power1_input"; fi
}
other() { local d="$1/sys/bus/pci/devices/$2"; mkdir -p "$d"; echo 0x8086 > "$d/vendor"; echo 0x1533 > "$d/device"; echo 0x8086 > "$d/subsystem_vendor"; echo 0x0000 > "$d/subsystem_device"; }
rm -rf n150 n300 p100a p150a p300c unknown broken none
card n150 0000:01:00.0 0x401e 0x0018 n150 0 0000046131000ABC 45250 18000000; other n150 0000:00:1f.6
card n300 0000:02:00.0 0x401e 0x0014 n300 0 000001001300D1E5 51500 33000000
card p100a 0000:03:00.0 0xb140 0x0043 p100a 0 0000043310024A0B 40125 21000000
card p150a 0000:04:00.0 0xb140 0x0040 p150a 0 0000040110050C19 38000 35000000
card p300c 0000:05:00.0 0xb140 0x0046 p300c 0 0000046110030F01 47000 60000000
card p300c 0000:06:00.0 0xb140 0x0046 p300c 1 0000046110030F01 48500 58000000
card unknown 0000:07:00.0 0x401e 0x0abc "" 0 "" "" ""
card unknown 0000:08:00.0 0xfaca 0x0003 "" 1 "" "" ""
card broken 0000:09:00.0 0x401e 0x0018 n150 0 0000046131000DEF 45250 18000000
printf 'zz\x01top' > broken/sys/bus/pci/devices/0000:09:00.0/device
rm broken/sys/bus/pci/devices/0000:09:00.0/subsystem_device; mkdir broken/sys/bus/pci/devices/0000:09:00.0/subsystem_device
echo 'hot!' > broken/sys/bus/pci/devices/0000:09:00.0/hwmon/hwmon3/temp1_input
printf '\xff\xfe\n' > 'broken/sys/bus/pci/devices/0000:09:00.0/tenstorrent/tenstorrent!0/tt_arc_fw_ver'
touch broken/sys/bus/pci/devices/0000:09:00.0/subsystem_device/.keep
other none 0000:00:1f.6
touch none/.keep n150/.keep
